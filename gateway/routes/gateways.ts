/**
 * /gateways: external orchestration engines (`temporal`, `webhook`) a
 * workflow step or task can dispatch to instead of running locally. The
 * api_key is sealed at rest and masked on every read; a moved base_url needs
 * it again. `POST /gateways/callbacks/:dispatch_id` is the webhook engine's
 * signed completion (public: the signature is the credential).
 * Engines, dispatch and health: domains/gateways (README "Gateways").
 */
import { z } from 'zod';
import { ENGINE_TYPES, type GatewayDispatchDoc, type GatewayDoc } from '../../domains/gateways/documents.js';
import { maskKey } from '../../domains/gateways/service.js';
import { stringTooDeep } from '../../runtime/json-depth.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** a gateway's context: a JSON object of at most 16 KiB, nesting at most 8 deep */
const MAX_CONTEXT_BYTES = 16_384;
const MAX_CONTEXT_DEPTH = 8;

const NAME = z
  .string()
  .min(1)
  .max(100, { message: 'name is at most 100 characters' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, { message: 'name starts with a letter or digit and uses letters, digits, space, ".", "_" and "-"' })
  .refine((name) => name !== 'default', { message: '`default` names the default gateway; choose another name' });
const BASE_URL = z
  .url({ protocol: /^https?$/, message: 'base_url must be an absolute http(s) URL' })
  .max(2048, { message: 'base_url is at most 2048 characters' });
const API_KEY = z.string().min(1).max(4096, { message: 'api_key is at most 4096 characters' });
const CONTEXT = z.record(z.string(), z.unknown()).superRefine((context, issues) => {
  const text = JSON.stringify(context);
  if (Buffer.byteLength(text, 'utf8') > MAX_CONTEXT_BYTES) {
    issues.addIssue({ code: 'custom', message: `context is at most ${MAX_CONTEXT_BYTES} bytes as JSON` });
  } else if (stringTooDeep(text, MAX_CONTEXT_DEPTH)) {
    issues.addIssue({ code: 'custom', message: `context nests at most ${MAX_CONTEXT_DEPTH} levels deep` });
  }
});

const gatewayCreate = z.strictObject({
  name: NAME,
  engine_type: z.enum(ENGINE_TYPES),
  base_url: BASE_URL,
  api_key: API_KEY.optional(),
  is_default: z.boolean().default(false),
  context: CONTEXT.default({}),
});
const gatewayPatch = z.strictObject({
  name: NAME.optional(),
  engine_type: z.enum(ENGINE_TYPES).optional().describe('fixed at creation: only the same value is accepted'),
  base_url: BASE_URL.optional(),
  api_key: API_KEY.nullable().optional().describe('a new key; null removes it; required again when base_url changes'),
  is_default: z.boolean().optional(),
  context: CONTEXT.optional(),
});
const dispatchQuery = pageQuery.extend({ status: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']).optional() });
const callbackParams = z.object({ dispatch_id: z.string().min(1).max(100) });

const gatewaySchema = z.object({
  ...storedSchema,
  name: z.string(),
  engine_type: z.enum(ENGINE_TYPES),
  base_url: z.string(),
  api_key: z.string().nullable().describe('masked (`****` and the last 4 characters); null when none is set'),
  is_default: z.boolean(),
  context: z.record(z.string(), z.unknown()),
  last_health_status: z.enum(['unknown', 'ok', 'down']),
  last_health_at: z.string().nullable(),
  last_health_error: z.string().nullable(),
  created_by: z.string(),
});
const dispatchSchema = z.object({
  ...storedSchema,
  gateway_id: z.string(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
  workflow_run_id: z.string(),
  step_id: z.string(),
  external_ref: z.string().nullable(),
  output: z.union([z.record(z.string(), z.unknown()), z.string(), z.null()]),
  error: z.string().nullable(),
  finished_at: z.string().nullable(),
});

const present = (gateway: GatewayDoc) => ({
  id: gateway.id,
  name: gateway.name,
  engine_type: gateway.engine_type,
  base_url: gateway.base_url,
  api_key: maskKey(gateway.api_key_hint),
  is_default: gateway.is_default,
  context: gateway.context,
  last_health_status: gateway.last_health_status,
  last_health_at: gateway.last_health_at,
  last_health_error: gateway.last_health_error,
  created_by: gateway.created_by,
  created_at: gateway.created_at,
  updated_at: gateway.updated_at,
});

const presentDispatch = (dispatch: GatewayDispatchDoc) => ({
  id: dispatch.id,
  gateway_id: dispatch.gateway_id,
  status: dispatch.status,
  workflow_run_id: dispatch.workflow_run_id,
  step_id: dispatch.step_id,
  external_ref: dispatch.external_ref,
  output: dispatch.output,
  error: dispatch.error,
  finished_at: dispatch.finished_at,
  created_at: dispatch.created_at,
  updated_at: dispatch.updated_at,
});

export function gatewayRoutes({ gateways, gatewayDispatcher }: Services): AnyRoute[] {
  const listPage = createPageResponder(gateways.listing, present);
  const dispatchPage = createPageResponder(gateways.dispatchListing, presentDispatch);
  return [
    route({
      method: 'GET',
      path: '/gateways',
      tag: 'gateways',
      summary: 'List gateways (external orchestration engines; api keys masked)',
      auth: 'bearer',
      permission: 'gateway:read',
      query: pageQuery,
      response: pageSchema(gatewaySchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/gateways',
      tag: 'gateways',
      summary: 'Create a gateway (`temporal`: context needs task_queue and workflow_type; `webhook`: api_key of at least 16 characters signs)',
      auth: 'bearer',
      permission: 'gateway:manage',
      body: gatewayCreate,
      response: gatewaySchema,
      status: 201,
      creates: true,
      errors: [422],
      handler: async ({ auth, body }) => {
        const created = await gateways.create(auth.orgId, {
          name: body.name,
          engineType: body.engine_type,
          baseUrl: body.base_url,
          apiKey: body.api_key,
          isDefault: body.is_default,
          context: body.context,
          createdBy: auth.userId,
        });
        return { status: 201, json: present(created) };
      },
    }),
    route({
      method: 'GET',
      path: '/gateways/:id',
      tag: 'gateways',
      summary: 'Get a gateway (api key masked) with its last health',
      auth: 'bearer',
      permission: 'gateway:read',
      params: idParams,
      response: gatewaySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await gateways.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/gateways/:id',
      tag: 'gateways',
      summary: 'Change a gateway (engine_type is fixed; a new base_url needs api_key again; is_default true clears the previous default)',
      auth: 'bearer',
      permission: 'gateway:manage',
      params: idParams,
      body: gatewayPatch,
      response: gatewaySchema,
      errors: [422],
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await gateways.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/gateways/:id',
      tag: 'gateways',
      summary: 'Delete a gateway',
      auth: 'bearer',
      permission: 'gateway:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await gateways.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/gateways/:id/test',
      tag: 'gateways',
      summary: 'Probe the engine now; answers the gateway with its new last_health_status (ok or down, and why)',
      auth: 'bearer',
      permission: 'gateway:manage',
      params: idParams,
      response: gatewaySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await gateways.test(auth.orgId, params.id)) }),
    }),
    route({
      method: 'GET',
      path: '/gateways/:id/dispatches',
      tag: 'gateways',
      summary: 'The dispatches sent to a gateway, oldest first (filter by status)',
      auth: 'bearer',
      permission: 'gateway:read',
      params: idParams,
      query: dispatchQuery,
      response: pageSchema(dispatchSchema),
      handler: async ({ auth, params, query }) => {
        const gateway = await gateways.get(auth.orgId, params.id);
        // the query object itself (not a copy): it carries the request's cursor scope
        const { status } = query;
        return dispatchPage(auth.orgId, query, status === undefined ? { gateway_id: gateway.id } : { gateway_id: gateway.id, status });
      },
    }),
    route({
      method: 'POST',
      path: '/gateways/callbacks/:dispatch_id',
      tag: 'gateways',
      summary:
        "A webhook engine's completion {status: succeeded|failed, output?, error?}, signed with the gateway's api_key (Standard Webhooks headers); 401 bad signature, 409 already settled",
      auth: 'public',
      bodyKind: 'raw',
      params: callbackParams,
      response: dispatchSchema,
      errors: [401, 409],
      handler: async ({ params, request }) => ({
        status: 200,
        json: presentDispatch(await gatewayDispatcher.settleCallback(params.dispatch_id, request.headers, request.body)),
      }),
    }),
  ];
}
