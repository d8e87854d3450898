/** /realms: namespaces for graph, sources and memory. `default` always exists and cannot be deleted. */
import { z } from 'zod';
import type { RealmDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { DEFAULT_REALM } from '../../runtime/organizations.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { getOr404, idParams, rejectImmutable, storedSchema, unique } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName, safeText } from '../safe-text.js';
import type { Services } from '../services.js';

export const REALM_NAME = z
  .string()
  .min(1)
  .max(100, { message: 'realm name is at most 100 characters' })
  .regex(/^[a-z0-9_-]+$/, { message: 'realm name uses lowercase a-z, 0-9, "-" and "_" only' });

const color = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, { message: 'color is a hex colour like #1f6feb' });

const realmCreate = z.strictObject({
  name: REALM_NAME,
  display_name: safeName(z.string().max(200)).nullish(),
  description: safeText(z.string().max(2000)).nullish(),
  color: color.nullish(),
});
const realmPatch = z.strictObject({
  name: z.string().optional(),
  display_name: safeName(z.string().max(200)).nullable().optional(),
  description: safeText(z.string().max(2000)).nullable().optional(),
  color: color.nullable().optional(),
});

const realmSchema = z.object({
  ...storedSchema,
  name: z.string(),
  display_name: z.string().nullable(),
  description: z.string().nullable(),
  color: z.string().nullable(),
});

const present = (realm: RealmDoc) => ({
  id: realm.id,
  name: realm.name,
  display_name: realm.display_name,
  description: realm.description,
  color: realm.color,
  created_at: realm.created_at,
  updated_at: realm.updated_at,
});

export function realmRoutes({ collections }: Services): AnyRoute[] {
  const { realms } = collections;
  const listPage = createPageResponder(realms, present);
  return [
    route({
      method: 'GET', path: '/realms', tag: 'realms', summary: 'List realms', auth: 'bearer', permission: 'realm:read',
      query: pageQuery, response: pageSchema(realmSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST', path: '/realms', tag: 'realms', summary: 'Create a realm', auth: 'bearer', permission: 'realm:manage',
      body: realmCreate, response: realmSchema, status: 201, creates: true,
      handler: async ({ auth, body }) => {
        const realm = await unique('realm', () =>
          realms.insert(auth.orgId, {
            name: body.name,
            display_name: body.display_name ?? null,
            description: body.description ?? null,
            color: body.color ?? null,
          }),
        );
        return { status: 201, json: present(realm) };
      },
    }),
    route({
      method: 'GET', path: '/realms/:id', tag: 'realms', summary: 'Get a realm by id or name', auth: 'bearer',
      permission: 'realm:read', params: idParams, response: realmSchema,
      handler: async ({ auth, params }) => {
        const realm = (await realms.get(auth.orgId, params.id)) ?? (await realms.findOne(auth.orgId, { name: params.id }));
        if (!realm) throw new ServiceError('not_found', `realm ${params.id} not found`);
        return { status: 200, json: present(realm) };
      },
    }),
    route({
      method: 'PATCH', path: '/realms/:id', tag: 'realms', summary: 'Update a realm (name is immutable)', auth: 'bearer',
      permission: 'realm:manage', params: idParams, body: realmPatch, response: realmSchema,
      handler: async ({ auth, params, body }) => {
        const realm = await getOr404(realms, auth.orgId, params.id, 'realm');
        rejectImmutable(realm, body, ['name']);
        const { name: _name, ...patch } = body;
        const updated = await realms.update(auth.orgId, realm.id, patch);
        if (!updated) throw new ServiceError('not_found', `realm ${params.id} not found`);
        return { status: 200, json: present(updated) };
      },
    }),
    route({
      method: 'DELETE', path: '/realms/:id', tag: 'realms', summary: 'Delete a realm (not `default`)', auth: 'bearer',
      permission: 'realm:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const realm = await getOr404(realms, auth.orgId, params.id, 'realm');
        if (realm.name === DEFAULT_REALM) {
          throw new ServiceError('conflict', 'the default realm cannot be deleted', { realm: DEFAULT_REALM });
        }
        // entries that name the realm would be orphaned: refuse until they are moved or deleted
        const memoryEntries = await collections.memory.count(auth.orgId, { realm: realm.name });
        if (memoryEntries > 0) {
          throw new ServiceError('conflict', `realm ${realm.name} still holds ${memoryEntries} memory entries`, {
            realm: realm.name,
            memory_entries: memoryEntries,
          });
        }
        await realms.delete(auth.orgId, realm.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
