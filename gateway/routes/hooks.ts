/**
 * Inbound webhooks: `POST /hooks/:trigger_id` (public; HMAC over the raw
 * bytes, checked before parsing: domains/tasks/inbound.ts), delivery
 * replay, and provisioned inbound endpoints (`/inbound-webhooks`, the
 * `service_webhook` form). A provisioned endpoint is a webhook task whose
 * instruction is the payload template, served at the same path.
 */
import { z } from 'zod';
import { DEFAULT_PAYLOAD_TEMPLATE } from '../../domains/tasks/inbound-endpoints.js';
import type { TaskDoc } from '../../domains/tasks/types.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { publicBaseUrl } from '../public-url.js';
import { hookUrl, presentDelivery } from './task-present.js';
import { deliverySchema } from './task-schemas.js';

const inboundCreate = z.strictObject({
  name: safeName(z.string().trim().min(1, { message: 'name must not be empty' }).max(200)),
  description: z.string().max(2000).nullable().optional(),
  payload_template: z.string().max(100_000).nullable().optional(),
  system_prompt: z.string().max(20_000).nullable().optional(),
});
const inboundPatch = z.strictObject({
  name: inboundCreate.shape.name.optional(),
  description: inboundCreate.shape.description,
  payload_template: inboundCreate.shape.payload_template,
  system_prompt: inboundCreate.shape.system_prompt,
});
const inboundSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  payload_template: z.string(),
  system_prompt: z.string().nullable(),
  slug: z.string(),
  url: z.string(),
  secret_token: z.string().optional(),
  created_at: z.string(),
});
const acceptedSchema = z.object({ delivery_id: z.string(), run_id: z.string().nullable(), status: z.string() });

function presentInbound(task: TaskDoc, baseUrl: string, secret?: string) {
  const template = task.input_template?.['instruction'];
  return {
    id: task.id,
    name: task.name,
    description: task.description,
    payload_template: typeof template === 'string' ? template : DEFAULT_PAYLOAD_TEMPLATE,
    system_prompt: task.system_prompt,
    slug: task.trigger_id ?? '',
    url: hookUrl(baseUrl, task.trigger_id ?? ''),
    ...(secret === undefined ? {} : { secret_token: secret }),
    created_at: task.created_at,
  };
}

export function hookRoutes({ config, taskRuntime, inboundEndpoints: endpoints }: Services): AnyRoute[] {
  const { inbound } = taskRuntime;

  return [
    route({
      method: 'POST',
      path: '/hooks/:trigger_id',
      tag: 'hooks',
      auth: 'public',
      bodyKind: 'raw',
      status: 202,
      maxBodyBytes: config.webhookMaxBodyBytes,
      secretParams: ['trigger_id'],
      summary:
        'Fire a webhook task, checked by its signature_scheme (X-Service-Signature by default; github, vercel, standard_webhooks, slack, token); JSON, form or multipart; 202 once stored',
      // any string: a malformed id is just an unknown trigger (404)
      params: z.object({ trigger_id: z.string() }),
      // the second form: Slack's url_verification answered (slack scheme)
      response: z.union([acceptedSchema, z.object({ challenge: z.string() })]),
      // 200: a sender's retry of a delivery already stored (status duplicate), or Slack's url_verification
      responses: { 200: z.union([acceptedSchema, z.object({ challenge: z.string() })]) },
      errors: [401, 429],
      handler: async ({ params, request }) => {
        const accepted = await inbound.receive(params.trigger_id, request);
        if ('challenge' in accepted) return { status: 200, json: { challenge: accepted.challenge } };
        return { status: accepted.status, json: { delivery_id: accepted.delivery_id, run_id: accepted.run_id, status: accepted.run_status } };
      },
    }),
    route({
      method: 'GET',
      path: '/hooks/deliveries/:delivery_id',
      tag: 'hooks',
      summary: 'One stored inbound delivery (headers, raw body, verification)',
      auth: 'bearer',
      permission: 'task:read',
      params: z.object({ delivery_id: z.string().min(1).max(100) }),
      response: deliverySchema,
      handler: async ({ auth, params }) => ({
        status: 200,
        json: presentDelivery(await endpoints.delivery(auth.orgId, params.delivery_id)),
      }),
    }),
    route({
      method: 'POST',
      path: '/hooks/deliveries/:delivery_id/replay',
      tag: 'hooks',
      status: 202,
      summary: 'Fire a stored delivery into its task again: a new run linked to the original delivery',
      auth: 'bearer',
      permission: 'webhook:manage',
      params: z.object({ delivery_id: z.string().min(1).max(100) }),
      response: acceptedSchema,
      handler: async ({ auth, params }) => ({ status: 202, json: await inbound.replay(auth.orgId, params.delivery_id) }),
    }),
    route({
      method: 'POST',
      path: '/inbound-webhooks',
      tag: 'hooks',
      status: 201,
      creates: true,
      summary: 'Provision an inbound webhook endpoint (service_webhook); secret_token is shown only now (rotate by delete and recreate)',
      auth: 'bearer',
      permission: 'webhook:manage',
      body: inboundCreate,
      response: inboundSchema,
      handler: async ({ auth, body, request }) => {
        const { task, secret } = await endpoints.create(auth.orgId, auth.userId, body);
        return { status: 201, json: presentInbound(task, publicBaseUrl(config, request), secret) };
      },
    }),
    route({
      method: 'GET',
      path: '/inbound-webhooks',
      tag: 'hooks',
      summary: 'Provisioned inbound webhook endpoints (no secrets)',
      auth: 'bearer',
      permission: 'webhook:read',
      query: pageQuery,
      response: pageSchema(inboundSchema),
      handler: async ({ auth, query, request }) => ({
        status: 200,
        json: pageEnvelope(query, await endpoints.list(auth.orgId, listOptions(query)), (task) => presentInbound(task, publicBaseUrl(config, request))),
      }),
    }),
    route({
      method: 'GET',
      path: '/inbound-webhooks/:id',
      tag: 'hooks',
      summary: 'One provisioned inbound webhook endpoint (no secret)',
      auth: 'bearer',
      permission: 'webhook:read',
      params: idParams,
      response: inboundSchema,
      handler: async ({ auth, params, request }) => ({
        status: 200,
        json: presentInbound(await endpoints.get(auth.orgId, params.id), publicBaseUrl(config, request)),
      }),
    }),
    route({
      method: 'PATCH',
      path: '/inbound-webhooks/:id',
      tag: 'hooks',
      summary: 'Change a provisioned inbound endpoint in place (name, description, payload_template, system_prompt); its slug, URL and secret stay',
      auth: 'bearer',
      permission: 'webhook:manage',
      params: idParams,
      body: inboundPatch,
      response: inboundSchema,
      handler: async ({ auth, params, body, request }) => ({
        status: 200,
        json: presentInbound(await endpoints.update(auth.orgId, params.id, body), publicBaseUrl(config, request)),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/inbound-webhooks/:id',
      tag: 'hooks',
      summary: 'Remove a provisioned inbound endpoint (its URL answers 404)',
      auth: 'bearer',
      permission: 'webhook:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await endpoints.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
