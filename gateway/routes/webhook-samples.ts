/**
 * /webhook-samples: built-in samples of common senders (domains/webhook-samples)
 * and the organization's saved ones; `run` fires a sample into a task as if
 * the sender had posted it (origin `sample`, no delivery stored).
 */
import { z } from 'zod';
import type { WebhookSampleDoc } from '../../domains/webhook-samples/documents.js';
import type { WebhookSample } from '../../domains/webhook-samples/builtin.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const SAMPLE_NAME = z
  .string()
  .min(1)
  .max(100, { message: 'name is at most 100 characters' })
  .regex(/^[a-z0-9][a-z0-9._-]*$/, { message: 'name uses lowercase a-z, 0-9, ".", "_" and "-", starting with a letter or digit' });
const HEADERS = z
  .record(
    z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9-]+$/, { message: 'header names use letters, digits and "-"' }),
    z.string().max(2000),
  )
  .refine((headers) => Object.keys(headers).length <= 50, { message: 'at most 50 headers' });

const sampleCreate = z.strictObject({
  name: SAMPLE_NAME,
  description: z.string().max(2000).default(''),
  body: z.record(z.string(), z.unknown(), { message: 'body is a JSON object' }),
  headers: HEADERS.default({}),
});
const nameParams = z.object({ sample_name: z.string().min(1).max(100) });
const runBody = z.strictObject({ task_id: z.string().min(1).max(100) });

const sampleSchema = z.object({
  name: z.string(),
  description: z.string(),
  body: z.record(z.string(), z.unknown()),
  headers: z.record(z.string(), z.string()),
  builtin: z.boolean(),
  id: z.string().nullable(),
  created_at: z.string().nullable(),
});
const listSchema = z.object({ items: z.array(sampleSchema), next_cursor: z.null(), total: z.number().int() });
const runSchema = z.object({ sample: z.string(), task_id: z.string(), run_id: z.string(), status: z.enum(['pending', 'running']) });

const presentBuiltin = (sample: WebhookSample) => ({ ...sample, headers: { ...sample.headers }, builtin: true, id: null, created_at: null });
const presentSaved = (sample: WebhookSampleDoc) => ({
  name: sample.name,
  description: sample.description,
  body: sample.body,
  headers: sample.headers,
  builtin: false,
  id: sample.id,
  created_at: sample.created_at,
});

export function webhookSampleRoutes({ webhookSamples }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/webhook-samples',
      tag: 'webhook-samples',
      auth: 'bearer',
      permission: 'webhook:read',
      summary: 'Built-in samples (code host push and pull request, build failure, deployment failure), then the saved ones',
      response: listSchema,
      handler: async ({ auth }) => {
        const { builtins, saved } = await webhookSamples.list(auth.orgId);
        const items = [...builtins.map(presentBuiltin), ...saved.map(presentSaved)];
        return { status: 200, json: { items, next_cursor: null, total: items.length } };
      },
    }),
    route({
      method: 'POST',
      path: '/webhook-samples',
      tag: 'webhook-samples',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Save a custom sample for this organization (kept until deleted)',
      body: sampleCreate,
      response: sampleSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: presentSaved(await webhookSamples.save(auth.orgId, auth.userId, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/webhook-samples/:sample_name',
      tag: 'webhook-samples',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Delete a saved sample (built-in ones cannot be deleted)',
      params: nameParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await webhookSamples.delete(auth.orgId, params.sample_name);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/webhook-samples/:sample_name/run',
      tag: 'webhook-samples',
      auth: 'bearer',
      permission: 'task:manage',
      summary: 'Fire a sample into a task, as if its sender had posted it',
      params: nameParams,
      body: runBody,
      response: runSchema,
      status: 202,
      handler: async ({ auth, params, body }) => {
        const fired = await webhookSamples.run(auth.orgId, params.sample_name, body.task_id);
        return { status: 202, json: { sample: params.sample_name, task_id: body.task_id, run_id: fired.run_id, status: fired.status } };
      },
    }),
  ];
}
