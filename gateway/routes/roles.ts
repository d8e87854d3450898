/**
 * /roles: the built-in roles (fixed ids `builtin:<name>`, read-only) followed
 * by the organization's custom roles, and the permission catalog. Members
 * hold a role by name, and identity reads it on every request, so a changed
 * custom role applies from the next request on.
 */
import { z } from 'zod';
import { BUILTIN_PREFIX } from '../../domains/roles/service.js';
import { ALL_PERMISSIONS, impliedBy, PERMISSIONS, type BuiltinRole } from '../../runtime/auth/permissions.js';
import type { RoleDoc } from '../../domains/roles/service.js';
import { assertGrantable, permissionList } from '../grants.js';
import type { OrgId } from '../../runtime/store/types.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema, type PageEnvelope, type PageQuery } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeText } from '../safe-text.js';
import type { Services } from '../services.js';

const ROLE_NAME = z
  .string()
  .min(1)
  .max(64, { message: 'role name is at most 64 characters' })
  .regex(/^[a-z0-9][a-z0-9_-]*$/, { message: 'role name is a lowercase slug: a-z, 0-9, "-" and "_", starting with a letter or digit' });

const roleCreate = z.strictObject({
  name: ROLE_NAME,
  description: safeText(z.string().max(2000)).optional(),
  permissions: permissionList,
});
const rolePatch = z.strictObject({
  name: z.string().optional(),
  description: safeText(z.string().max(2000)).optional(),
  permissions: permissionList.optional(),
});

const roleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  is_builtin: z.boolean(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
type RoleView = z.output<typeof roleSchema>;

const presentBuiltin = (role: BuiltinRole): RoleView => ({
  id: BUILTIN_PREFIX + role.name,
  name: role.name,
  description: role.description,
  permissions: [...role.permissions],
  is_builtin: true,
  created_at: null,
  updated_at: null,
});

const presentCustom = (role: RoleDoc): RoleView => ({
  id: role.id,
  name: role.name,
  description: role.description,
  permissions: role.permissions,
  is_builtin: false,
  created_at: role.created_at,
  updated_at: role.updated_at,
});

const present = (role: BuiltinRole | RoleDoc): RoleView => ('id' in role ? presentCustom(role) : presentBuiltin(role));

export function roleRoutes({ roles }: Services): AnyRoute[] {
  /** the cursor is the id of the last role of a page: built-ins first, then custom roles */
  async function listRoles(org: OrgId, query: PageQuery): Promise<PageEnvelope<RoleView>> {
    const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
    const page = await roles.list(org, query.limit, after);
    const items = [...page.builtins.map(presentBuiltin), ...page.custom.map(presentCustom)];
    const last = items.at(-1);
    return { items, next_cursor: page.more && last ? encodeCursor(query, last.id) : null, total: page.total };
  }

  return [
    route({
      method: 'GET',
      path: '/roles',
      tag: 'roles',
      summary: 'List roles: built-ins first, then custom roles',
      auth: 'bearer',
      permission: 'role:read',
      query: pageQuery,
      response: pageSchema(roleSchema),
      handler: async ({ auth, query }) => ({ status: 200, json: await listRoles(auth.orgId, query) }),
    }),
    route({
      method: 'GET',
      path: '/roles/permissions',
      tag: 'roles',
      summary: 'The catalog of permission strings',
      auth: 'bearer',
      permission: 'role:read',
      response: z.object({
        items: z.array(z.object({ name: z.string(), description: z.string(), implies: z.array(z.string()) })),
        total: z.number().int(),
      }),
      handler: async () => {
        const items = ALL_PERMISSIONS.map((name) => ({ name, description: PERMISSIONS[name], implies: impliedBy(name) }));
        return { status: 200, json: { items, total: items.length } };
      },
    }),
    route({
      method: 'POST',
      path: '/roles',
      tag: 'roles',
      summary: 'Create a custom role',
      auth: 'bearer',
      permission: 'role:manage',
      body: roleCreate,
      response: roleSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({
        status: 201,
        json: presentCustom(await roles.create(auth.orgId, body, (permissions) => assertGrantable(auth, permissions))),
      }),
    }),
    route({
      method: 'GET',
      path: '/roles/:id',
      tag: 'roles',
      summary: 'Get a role (built-in ids are `builtin:<name>`)',
      auth: 'bearer',
      permission: 'role:read',
      params: idParams,
      response: roleSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await roles.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/roles/:id',
      tag: 'roles',
      summary: 'Change a custom role (name is immutable; built-ins are fixed)',
      auth: 'bearer',
      permission: 'role:manage',
      params: idParams,
      body: rolePatch,
      response: roleSchema,
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: presentCustom(await roles.update(auth.orgId, params.id, body, (permissions) => assertGrantable(auth, permissions))),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/roles/:id',
      tag: 'roles',
      summary: 'Delete a custom role nobody holds',
      auth: 'bearer',
      permission: 'role:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await roles.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
