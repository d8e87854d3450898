/**
 * /webhook-samples: built-in samples of common senders (domains/webhook-samples)
 * and the organization's saved ones; `run` fires a sample into a task as if
 * the sender had posted it (origin `sample`, no delivery stored).
 */
import { z } from 'zod';
import type { WebhookSampleDoc } from '../../domains/webhook-samples/documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { builtinSample, builtinSamples, type WebhookSample } from '../../domains/webhook-samples/builtin.js';
import { unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const SAMPLE_NAME = z
  .string()
  .min(1)
  .max(100, { message: 'name is at most 100 characters' })
  .regex(/^[a-z0-9][a-z0-9._-]*$/, { message: 'name uses lowercase a-z, 0-9, ".", "_" and "-", starting with a letter or digit' });
const HEADERS = z
  .record(z.string().min(1).max(100).regex(/^[A-Za-z0-9-]+$/, { message: 'header names use letters, digits and "-"' }), z.string().max(2000))
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

/** header names are matched lowercased, as the task sees HTTP headers */
const lowercaseKeys = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

export function webhookSampleRoutes({ collections, tasks }: Services): AnyRoute[] {
  const { webhookSamples } = collections;
  return [
    route({
      method: 'GET', path: '/webhook-samples', tag: 'webhook-samples', auth: 'bearer', permission: 'webhook:read',
      summary: 'Built-in samples (code host push and pull request, build failure, deployment failure), then the saved ones',
      response: listSchema,
      handler: async ({ auth }) => {
        const saved = await webhookSamples.findAll(auth.orgId);
        const items = [...builtinSamples().map(presentBuiltin), ...saved.map(presentSaved)];
        return { status: 200, json: { items, next_cursor: null, total: items.length } };
      },
    }),
    route({
      method: 'POST', path: '/webhook-samples', tag: 'webhook-samples', auth: 'bearer', permission: 'webhook:manage',
      summary: 'Save a custom sample for this organization (kept until deleted)', body: sampleCreate, response: sampleSchema,
      status: 201, creates: true,
      handler: async ({ auth, body }) => {
        if (builtinSample(body.name)) {
          throw new ServiceError('conflict', `${body.name} is a built-in sample name`, { fields: ['name'] });
        }
        const saved = await unique('sample', () =>
          webhookSamples.insert(auth.orgId, {
            name: body.name,
            description: body.description,
            body: body.body,
            headers: lowercaseKeys(body.headers),
            created_by: auth.userId,
          }),
        );
        return { status: 201, json: presentSaved(saved) };
      },
    }),
    route({
      method: 'DELETE', path: '/webhook-samples/:sample_name', tag: 'webhook-samples', auth: 'bearer', permission: 'webhook:manage',
      summary: 'Delete a saved sample (built-in ones cannot be deleted)', params: nameParams, status: 204,
      handler: async ({ auth, params }) => {
        if (builtinSample(params.sample_name)) {
          throw new ServiceError('conflict', `${params.sample_name} is a built-in sample and cannot be deleted`);
        }
        const saved = await webhookSamples.findOne(auth.orgId, { name: params.sample_name });
        if (!saved) throw new ServiceError('not_found', `sample ${params.sample_name} not found`);
        await webhookSamples.delete(auth.orgId, saved.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST', path: '/webhook-samples/:sample_name/run', tag: 'webhook-samples', auth: 'bearer', permission: 'task:manage',
      summary: 'Fire a sample into a task, as if its sender had posted it', params: nameParams, body: runBody, response: runSchema,
      status: 202,
      handler: async ({ auth, params, body }) => {
        const sample: { body: Record<string, unknown>; headers: Record<string, string> } | null =
          builtinSample(params.sample_name) ?? (await webhookSamples.findOne(auth.orgId, { name: params.sample_name }));
        if (!sample) throw new ServiceError('not_found', `sample ${params.sample_name} not found`);
        const fired = await tasks.fire(auth.orgId, body.task_id, {
          origin: 'sample',
          // a copy: the built-in bodies are shared
          body: structuredClone(sample.body),
          headers: { ...sample.headers },
          delivery_id: null,
        });
        return { status: 202, json: { sample: params.sample_name, task_id: body.task_id, run_id: fired.run_id, status: fired.status } };
      },
    }),
  ];
}
