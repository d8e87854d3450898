/** /realms: namespaces for graph, sources and memory. `default` always exists and cannot be deleted. */
import { z } from 'zod';
import type { RealmDoc } from '../../domains/realms/documents.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
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

export function realmRoutes({ realms }: Services): AnyRoute[] {
  const listPage = createPageResponder(realms.listing, present);
  return [
    route({
      method: 'GET',
      path: '/realms',
      tag: 'realms',
      summary: 'List realms',
      auth: 'bearer',
      permission: 'realm:read',
      query: pageQuery,
      response: pageSchema(realmSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/realms',
      tag: 'realms',
      summary: 'Create a realm',
      auth: 'bearer',
      permission: 'realm:manage',
      body: realmCreate,
      response: realmSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await realms.create(auth.orgId, body.name, body)) }),
    }),
    route({
      method: 'GET',
      path: '/realms/:id',
      tag: 'realms',
      summary: 'Get a realm by id or name',
      auth: 'bearer',
      permission: 'realm:read',
      params: idParams,
      response: realmSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await realms.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/realms/:id',
      tag: 'realms',
      summary: 'Update a realm (name is immutable)',
      auth: 'bearer',
      permission: 'realm:manage',
      params: idParams,
      body: realmPatch,
      response: realmSchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await realms.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/realms/:id',
      tag: 'realms',
      summary: 'Delete a realm (not `default`)',
      auth: 'bearer',
      permission: 'realm:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await realms.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
