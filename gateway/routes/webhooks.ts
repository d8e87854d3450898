/**
 * /webhooks: outbound webhooks (name, url, secret, retries), their delivery
 * log, a test send and secret rotation with an overlap. The secret is shown
 * in full only in the answers to create and rotate; reads mask it.
 * Delivery and signing: domains/webhooks (README "Outbound webhooks").
 */
import { z } from 'zod';
import type { OutboundWebhookDoc, WebhookDeliveryDoc } from '../../domains/webhooks/documents.js';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from '../../domains/webhooks/outbound-webhooks.js';
import { maskSecret } from '../../domains/webhooks/secrets.js';
import { standardWebhooksSecret } from '../../domains/webhooks/signing.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** a test send waits this long for its first attempt before answering `queued` */
const TEST_WAIT_MS = 10_000;
const MAX_RETRIES = 10;

const NAME = z
  .string()
  .min(1)
  .max(100, { message: 'name is at most 100 characters' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, { message: 'name starts with a letter or digit and uses letters, digits, space, ".", "_" and "-"' });
const URL_FIELD = z.url({ protocol: /^https?$/, message: 'url must be an absolute http(s) URL' }).max(2048, { message: 'url is at most 2048 characters' });
const SECRET = z.string().min(16, { message: 'secret is at least 16 characters' }).max(256, { message: 'secret is at most 256 characters' });
const RETRIES = z
  .number()
  .int()
  .min(0)
  .max(MAX_RETRIES, { message: `retries is at most ${MAX_RETRIES}` });

const webhookCreate = z.strictObject({ name: NAME, url: URL_FIELD, secret: SECRET.optional(), retries: RETRIES.default(3) });
const webhookPatch = z.strictObject({ name: NAME.optional(), url: URL_FIELD.optional(), retries: RETRIES.optional() });
const rotateBody = z.strictObject({
  secret: SECRET.optional(),
  overlap_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_OVERLAP_SECONDS, { message: `overlap_seconds is at most ${MAX_OVERLAP_SECONDS} (7 days)` })
    .default(DEFAULT_OVERLAP_SECONDS),
});
const testBody = z.strictObject({ payload: z.record(z.string(), z.unknown()).optional() }).optional();
const deliveryParams = z.object({ id: z.string().min(1).max(100), delivery_id: z.string().min(1).max(100) });
const deliveryQuery = pageQuery.extend({ status: z.enum(['queued', 'in_flight', 'delivered', 'failed']).optional() });

const webhookSchema = z.object({
  ...storedSchema,
  name: z.string(),
  url: z.string(),
  secret: z.string().describe('masked except in the answers to create and rotate-secret'),
  standard_webhooks_secret: z.string().optional().describe('`whsec_` form of the secret for Standard Webhooks libraries; only with the plain secret'),
  retries: z.number().int(),
  previous_secret_expires_at: z.string().nullable().describe('while set and in the future, deliveries are signed with the previous secret too'),
  created_by: z.string(),
});
const attemptSchema = z.object({
  n: z.number().int(),
  at: z.string(),
  status: z.number().int().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
});
const deliverySchema = z.object({
  ...storedSchema,
  webhook_id: z.string(),
  event: z.string(),
  status: z.enum(['queued', 'in_flight', 'delivered', 'failed']),
  payload: z.unknown(),
  attempts: z.array(attemptSchema),
  max_attempts: z.number().int(),
  next_attempt_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  run_id: z.string().nullable(),
});

const present = (webhook: OutboundWebhookDoc, plainSecret?: string) => ({
  id: webhook.id,
  name: webhook.name,
  url: webhook.url,
  secret: plainSecret ?? maskSecret(webhook.secret_hint),
  ...(plainSecret === undefined ? {} : { standard_webhooks_secret: standardWebhooksSecret(plainSecret) }),
  retries: webhook.retries,
  previous_secret_expires_at: webhook.previous_secret_expires_at,
  created_by: webhook.created_by,
  created_at: webhook.created_at,
  updated_at: webhook.updated_at,
});

const presentDelivery = (delivery: WebhookDeliveryDoc) => ({
  id: delivery.id,
  webhook_id: delivery.webhook_id,
  event: delivery.event,
  status: delivery.status,
  payload: JSON.parse(delivery.body) as unknown,
  attempts: delivery.attempts,
  max_attempts: delivery.max_attempts,
  next_attempt_at: delivery.next_attempt_at,
  finished_at: delivery.finished_at,
  run_id: delivery.run_id,
  created_at: delivery.created_at,
  updated_at: delivery.updated_at,
});

export function webhookRoutes({ webhooks }: Services): AnyRoute[] {
  const listPage = createPageResponder(webhooks.listing, (webhook) => present(webhook));
  const deliveryPage = createPageResponder(webhooks.deliveryListing, presentDelivery);
  return [
    route({
      method: 'GET',
      path: '/webhooks',
      tag: 'webhooks',
      summary: 'List outbound webhooks (secrets masked)',
      auth: 'bearer',
      permission: 'webhook:read',
      query: pageQuery,
      response: pageSchema(webhookSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/webhooks',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Create an outbound webhook (the secret is generated when absent and shown only in this answer)',
      body: webhookCreate,
      response: webhookSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        const { webhook, secret } = await webhooks.create(auth.orgId, {
          name: body.name,
          url: body.url,
          secret: body.secret,
          retries: body.retries,
          createdBy: auth.userId,
        });
        return { status: 201, json: present(webhook, secret) };
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id',
      tag: 'webhooks',
      summary: 'Get an outbound webhook (secret masked)',
      auth: 'bearer',
      permission: 'webhook:read',
      params: idParams,
      response: webhookSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await webhooks.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:id',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Change name, url or retries (the secret changes through rotate-secret)',
      params: idParams,
      body: webhookPatch,
      response: webhookSchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await webhooks.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:id',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Delete an outbound webhook (deliveries still queued end as failed)',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await webhooks.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:id/rotate-secret',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Replace the secret; the previous one keeps signing (X-Service-Signature-Previous, a second webhook-signature entry) for overlap_seconds',
      params: idParams,
      body: rotateBody,
      response: webhookSchema,
      handler: async ({ auth, params, body }) => {
        const rotated = await webhooks.rotate(auth.orgId, params.id, { secret: body.secret, overlapSeconds: body.overlap_seconds });
        return { status: 200, json: present(rotated.webhook, rotated.secret) };
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:id/test',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:manage',
      summary: 'Send a `webhook.test` event now; answers after the first attempt (retries go on in the background)',
      params: idParams,
      body: testBody,
      response: deliverySchema,
      status: 202,
      handler: async ({ auth, params, body }) => ({
        status: 202,
        json: presentDelivery(await webhooks.test(auth.orgId, params.id, auth.userId, body?.payload, TEST_WAIT_MS)),
      }),
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:read',
      summary: 'The delivery log of a webhook, oldest first: each delivery with every attempt (status, latency, error)',
      params: idParams,
      query: deliveryQuery,
      response: pageSchema(deliverySchema),
      handler: async ({ auth, params, query }) => {
        const webhook = await webhooks.get(auth.orgId, params.id);
        // the query object itself (not a copy): it carries the request's cursor scope
        const { status } = query;
        return deliveryPage(auth.orgId, query, status === undefined ? { webhook_id: webhook.id } : { webhook_id: webhook.id, status });
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/deliveries/:delivery_id',
      tag: 'webhooks',
      auth: 'bearer',
      permission: 'webhook:read',
      summary: 'One delivery with its attempts',
      params: deliveryParams,
      response: deliverySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: presentDelivery(await webhooks.delivery(auth.orgId, params.id, params.delivery_id)) }),
    }),
  ];
}
