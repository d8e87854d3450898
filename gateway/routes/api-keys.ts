/**
 * /api-keys: programmatic credentials of an organization. The plaintext key is
 * answered once (at creation and at rotation) and stored only as its sha256.
 * Deleting is a soft revoke: the record stays, listed, with `active: false`.
 * Nobody creates, changes, rotates or revokes a key that holds more than they
 * do (`assertGrantable`, `assertCovers`).
 */
import { z } from 'zod';
import type { KeyGuard } from '../../domains/api-keys/service.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { ApiKeyDoc } from '../../domains/api-keys/service.js';
import { assertCovers, assertGrantable, permissionList } from '../grants.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

const sourceIds = z
  .array(z.string().min(1).max(100))
  .max(1000)
  .transform((ids) => [...new Set(ids)]);

const apiKeyCreate = z.strictObject({
  name: safeName(z.string().trim().min(1, { message: 'name is required' }).max(200, { message: 'name is at most 200 characters' })),
  permissions: permissionList,
  source_ids: sourceIds.nullish(),
  expires_in_days: z.number().int({ message: 'expires_in_days is a whole number' }).min(1).max(3650).nullish(),
});
const apiKeyPatch = z.strictObject({
  name: apiKeyCreate.shape.name.optional(),
  permissions: permissionList.optional(),
  source_ids: sourceIds.nullable().optional(),
  // accepted by the schema so a change answers `immutable_field`, not a generic validation error
  expires_in_days: z.number().int().nullable().optional(),
});

const apiKeySchema = z.object({
  ...storedSchema,
  name: z.string(),
  permissions: z.array(z.string()),
  source_ids: z.array(z.string()).nullable(),
  key_prefix: z.string(),
  active: z.boolean(),
  expires_in_days: z.number().int().nullable(),
  expires_at: z.string().nullable(),
  created_by: z.string(),
  revoked_at: z.string().nullable(),
  rotated_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});
const apiKeyWithSecret = apiKeySchema.extend({ key: z.string() });

/** Never the hash: only what identifies the key to a person. */
const present = (record: ApiKeyDoc) => ({
  id: record.id,
  name: record.name,
  permissions: record.permissions,
  source_ids: record.source_ids,
  key_prefix: record.key_prefix,
  active: record.active,
  expires_in_days: record.expires_in_days,
  expires_at: record.expires_at,
  created_by: record.created_by,
  revoked_at: record.revoked_at,
  rotated_at: record.rotated_at,
  last_used_at: record.last_used_at,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

/** nobody creates, changes, rotates or revokes a key holding more than they do */
const guardOf = (auth: AuthContext): KeyGuard => ({
  grant: (permissions) => assertGrantable(auth, permissions),
  covers: (held, action) => assertCovers(auth, held, action),
});

export function apiKeyRoutes({ apiKeys }: Services): AnyRoute[] {
  const listPage = createPageResponder(apiKeys.listing, present);
  return [
    route({
      method: 'GET',
      path: '/api-keys',
      tag: 'api-keys',
      summary: 'List API keys (revoked ones included)',
      auth: 'bearer',
      permission: 'api_key:read',
      query: pageQuery,
      response: pageSchema(apiKeySchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/api-keys',
      tag: 'api-keys',
      summary: 'Create an API key; the plaintext `key` is answered only here',
      auth: 'bearer',
      permission: 'api_key:manage',
      body: apiKeyCreate,
      response: apiKeyWithSecret,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        const { record, key } = await apiKeys.create(auth, body, guardOf(auth));
        return { status: 201, json: { ...present(record), key } };
      },
    }),
    route({
      method: 'GET',
      path: '/api-keys/:id',
      tag: 'api-keys',
      summary: 'Get an API key',
      auth: 'bearer',
      permission: 'api_key:read',
      params: idParams,
      response: apiKeySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await apiKeys.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/api-keys/:id',
      tag: 'api-keys',
      summary: 'Rename or re-scope an API key (expires_in_days is immutable)',
      auth: 'bearer',
      permission: 'api_key:manage',
      params: idParams,
      body: apiKeyPatch,
      response: apiKeySchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await apiKeys.update(auth, params.id, body, guardOf(auth))) }),
    }),
    route({
      method: 'POST',
      path: '/api-keys/:id/rotate',
      tag: 'api-keys',
      summary: 'Replace the secret of an API key; the old key stops working at once, the new one is answered only here',
      auth: 'bearer',
      permission: 'api_key:manage',
      params: idParams,
      response: apiKeyWithSecret,
      handler: async ({ auth, params }) => {
        const { record, key } = await apiKeys.rotate(auth, params.id, guardOf(auth));
        return { status: 200, json: { ...present(record), key } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api-keys/:id',
      tag: 'api-keys',
      summary: 'Revoke an API key (the record stays, inactive)',
      auth: 'bearer',
      permission: 'api_key:manage',
      params: idParams,
      response: apiKeySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await apiKeys.revoke(auth, params.id, guardOf(auth))) }),
    }),
  ];
}
