/**
 * /api-keys: programmatic credentials of an organization. The plaintext key is
 * answered once (at creation and at rotation) and stored only as its sha256.
 * Deleting is a soft revoke: the record stays, listed, with `active: false`.
 * Nobody creates, changes, rotates or revokes a key that holds more than they
 * do (`assertGrantable`, `assertCovers`).
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import { IdentityService } from '../../runtime/auth/identity.js';
import type { ApiKeyDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import { assertCovers, assertGrantable, permissionList } from '../grants.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { isoAt } from '../../runtime/clock.js';

const DAY_MS = 86_400_000;

const sourceIds = z.array(z.string().min(1).max(100)).max(1000).transform((ids) => [...new Set(ids)]);

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

/**
 * A key made by a source-scoped API key stays within that scope: omitted
 * source_ids inherit it, wider ones answer 403.
 */
function scopeFor(auth: AuthContext, requested: string[] | null | undefined): string[] | null {
  if (auth.sourceIds === null) return requested ?? null;
  if (requested === undefined || requested === null) return [...auth.sourceIds];
  const outside = requested.filter((id) => !auth.sourceIds?.includes(id));
  if (outside.length > 0) {
    throw new ServiceError('forbidden', `this API key cannot grant access to sources outside its own scope: ${outside.join(', ')}`, {
      source_ids: outside,
    });
  }
  return requested;
}

export function apiKeyRoutes({ collections, clock }: Services): AnyRoute[] {
  const { apiKeys } = collections;
  const listPage = createPageResponder(apiKeys, present);
  return [
    route({
      method: 'GET', path: '/api-keys', tag: 'api-keys', summary: 'List API keys (revoked ones included)', auth: 'bearer',
      permission: 'api_key:read', query: pageQuery, response: pageSchema(apiKeySchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST', path: '/api-keys', tag: 'api-keys', summary: 'Create an API key; the plaintext `key` is answered only here',
      auth: 'bearer', permission: 'api_key:manage', body: apiKeyCreate, response: apiKeyWithSecret, status: 201, creates: true,
      handler: async ({ auth, body }) => {
        assertGrantable(auth, body.permissions);
        const source_ids = scopeFor(auth, body.source_ids);
        const expiresInDays = body.expires_in_days ?? null;
        const { key, hash, prefix } = IdentityService.newApiKey();
        const record = await unique('API key', () =>
          apiKeys.insert(auth.orgId, {
            name: body.name,
            permissions: body.permissions,
            source_ids,
            key_hash: hash,
            key_prefix: prefix,
            active: true,
            expires_in_days: expiresInDays,
            expires_at: expiresInDays === null ? null : isoAt(clock.now() + expiresInDays * DAY_MS),
            created_by: auth.userId,
            revoked_at: null,
            rotated_at: null,
            last_used_at: null,
          }),
        );
        return { status: 201, json: { ...present(record), key } };
      },
    }),
    route({
      method: 'GET', path: '/api-keys/:id', tag: 'api-keys', summary: 'Get an API key', auth: 'bearer',
      permission: 'api_key:read', params: idParams, response: apiKeySchema,
      handler: async ({ auth, params }) => ({
        status: 200,
        json: present(await getOr404(apiKeys, auth.orgId, params.id, 'API key')),
      }),
    }),
    route({
      method: 'PATCH', path: '/api-keys/:id', tag: 'api-keys', summary: 'Rename or re-scope an API key (expires_in_days is immutable)',
      auth: 'bearer', permission: 'api_key:manage', params: idParams, body: apiKeyPatch, response: apiKeySchema,
      handler: async ({ auth, params, body }) => {
        const record = await getOr404(apiKeys, auth.orgId, params.id, 'API key');
        rejectImmutable(record, body, ['expires_in_days']);
        assertCovers(auth, record, 'change');
        if (body.permissions !== undefined) assertGrantable(auth, body.permissions);
        const source_ids = body.source_ids === undefined ? undefined : scopeFor(auth, body.source_ids);
        const updated = await apiKeys.update(auth.orgId, record.id, {
          ...(body.name === undefined ? {} : { name: body.name }),
          ...(body.permissions === undefined ? {} : { permissions: body.permissions }),
          ...(source_ids === undefined ? {} : { source_ids }),
        });
        if (!updated) throw new ServiceError('not_found', `API key ${params.id} not found`);
        return { status: 200, json: present(updated) };
      },
    }),
    route({
      method: 'POST', path: '/api-keys/:id/rotate', tag: 'api-keys',
      summary: 'Replace the secret of an API key; the old key stops working at once, the new one is answered only here',
      auth: 'bearer', permission: 'api_key:manage', params: idParams, response: apiKeyWithSecret,
      handler: async ({ auth, params }) => {
        const record = await getOr404(apiKeys, auth.orgId, params.id, 'API key');
        assertCovers(auth, record, 'rotate');
        if (!record.active) throw new ServiceError('conflict', 'a revoked API key cannot be rotated', { id: record.id });
        if (record.expires_at !== null && Date.parse(record.expires_at) <= clock.now()) {
          throw new ServiceError('conflict', 'an expired API key cannot be rotated; create a new one', { id: record.id });
        }
        const { key, hash, prefix } = IdentityService.newApiKey();
        const updated = await unique('API key', () =>
          apiKeys.update(auth.orgId, record.id, { key_hash: hash, key_prefix: prefix, rotated_at: nowIso() }),
        );
        if (!updated) throw new ServiceError('not_found', `API key ${params.id} not found`);
        return { status: 200, json: { ...present(updated), key } };
      },
    }),
    route({
      method: 'DELETE', path: '/api-keys/:id', tag: 'api-keys', summary: 'Revoke an API key (the record stays, inactive)',
      auth: 'bearer', permission: 'api_key:manage', params: idParams, response: apiKeySchema,
      handler: async ({ auth, params }) => {
        const record = await getOr404(apiKeys, auth.orgId, params.id, 'API key');
        assertCovers(auth, record, 'revoke');
        // revoking twice keeps the first revocation time
        if (!record.active) return { status: 200, json: present(record) };
        const updated = await apiKeys.update(auth.orgId, record.id, { active: false, revoked_at: nowIso() });
        if (!updated) throw new ServiceError('not_found', `API key ${params.id} not found`);
        return { status: 200, json: present(updated) };
      },
    }),
  ];
}
