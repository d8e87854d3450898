/**
 * /roles: the built-in roles (fixed ids `builtin:<name>`, read-only) followed
 * by the organization's custom roles, and the permission catalog. Members
 * hold a role by name, and identity reads it on every request, so a changed
 * custom role applies from the next request on.
 */
import { z } from 'zod';
import { ALL_PERMISSIONS, BUILTIN_ROLES, builtinRole, impliedBy, PERMISSIONS, type BuiltinRole } from '../../runtime/auth/permissions.js';
import type { RoleDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import type { OrgId } from '../../runtime/store/types.js';
import { assertGrantable, permissionList } from '../grants.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema, type PageEnvelope, type PageQuery } from '../pagination.js';
import { idParams } from '../resource.js';
import { rejectImmutable, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeText } from '../safe-text.js';
import type { Services } from '../services.js';

const BUILTIN_PREFIX = 'builtin:';
/** API-key callers carry this role name (runtime/auth/identity.ts); a custom role may not take it. */
const RESERVED_NAMES = new Set(['api_key']);

export const ROLE_NAME = z
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

const builtinById = (id: string): BuiltinRole | undefined => BUILTIN_ROLES.find((role) => BUILTIN_PREFIX + role.name === id);

const builtinModified = (): ServiceError => new ServiceError('conflict', 'built-in roles cannot be modified');

export function roleRoutes({ collections, clock }: Services): AnyRoute[] {
  const { roles, memberships, invites } = collections;

  /** One keyset over two sources: the built-ins (in catalog order), then the custom roles (by id). */
  async function listRoles(org: OrgId, query: PageQuery): Promise<PageEnvelope<RoleView>> {
    const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
    let builtinStart = 0;
    if (after !== null && after.startsWith(BUILTIN_PREFIX)) {
      const index = BUILTIN_ROLES.findIndex((role) => BUILTIN_PREFIX + role.name === after);
      if (index < 0) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
      builtinStart = index + 1;
    } else if (after !== null) {
      builtinStart = BUILTIN_ROLES.length;
    }
    const items = BUILTIN_ROLES.slice(builtinStart, builtinStart + query.limit).map(presentBuiltin);
    const customTotal = await roles.count(org);
    const room = query.limit - items.length;
    let more: boolean;
    if (room > 0) {
      const customAfter = after !== null && !after.startsWith(BUILTIN_PREFIX) ? after : null;
      const page = await roles.list(org, { limit: room, after: customAfter });
      items.push(...page.items.map(presentCustom));
      more = page.nextAfter !== null;
    } else {
      more = builtinStart + items.length < BUILTIN_ROLES.length || customTotal > 0;
    }
    const last = items.at(-1);
    return {
      items,
      next_cursor: more && last ? encodeCursor(query, last.id) : null,
      total: BUILTIN_ROLES.length + customTotal,
    };
  }

  async function customOr404(org: OrgId, id: string): Promise<RoleDoc> {
    const role = await roles.get(org, id);
    if (!role) throw new ServiceError('not_found', `role ${id} not found`);
    return role;
  }

  return [
    route({
      method: 'GET', path: '/roles', tag: 'roles', summary: 'List roles: built-ins first, then custom roles', auth: 'bearer',
      permission: 'role:read', query: pageQuery, response: pageSchema(roleSchema),
      handler: async ({ auth, query }) => ({ status: 200, json: await listRoles(auth.orgId, query) }),
    }),
    route({
      method: 'GET', path: '/roles/permissions', tag: 'roles', summary: 'The catalog of permission strings', auth: 'bearer',
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
      method: 'POST', path: '/roles', tag: 'roles', summary: 'Create a custom role', auth: 'bearer', permission: 'role:manage',
      body: roleCreate, response: roleSchema, status: 201, creates: true,
      handler: async ({ auth, body }) => {
        if (builtinRole(body.name) || RESERVED_NAMES.has(body.name)) {
          throw new ServiceError('conflict', `"${body.name}" is the name of a built-in role`, { fields: ['name'] });
        }
        assertGrantable(auth, body.permissions);
        const role = await unique('role', () =>
          roles.insert(auth.orgId, { name: body.name, description: body.description ?? '', permissions: body.permissions }),
        );
        return { status: 201, json: presentCustom(role) };
      },
    }),
    route({
      method: 'GET', path: '/roles/:id', tag: 'roles', summary: 'Get a role (built-in ids are `builtin:<name>`)', auth: 'bearer',
      permission: 'role:read', params: idParams, response: roleSchema,
      handler: async ({ auth, params }) => {
        const builtin = builtinById(params.id);
        return { status: 200, json: builtin ? presentBuiltin(builtin) : presentCustom(await customOr404(auth.orgId, params.id)) };
      },
    }),
    route({
      method: 'PATCH', path: '/roles/:id', tag: 'roles', summary: 'Change a custom role (name is immutable; built-ins are fixed)',
      auth: 'bearer', permission: 'role:manage', params: idParams, body: rolePatch, response: roleSchema,
      handler: async ({ auth, params, body }) => {
        if (builtinById(params.id)) throw builtinModified();
        const role = await customOr404(auth.orgId, params.id);
        rejectImmutable(role, body, ['name']);
        if (body.permissions !== undefined) assertGrantable(auth, body.permissions);
        const updated = await roles.update(auth.orgId, role.id, {
          ...(body.description === undefined ? {} : { description: body.description }),
          ...(body.permissions === undefined ? {} : { permissions: body.permissions }),
        });
        if (!updated) throw new ServiceError('not_found', `role ${params.id} not found`);
        return { status: 200, json: presentCustom(updated) };
      },
    }),
    route({
      method: 'DELETE', path: '/roles/:id', tag: 'roles', summary: 'Delete a custom role nobody holds', auth: 'bearer',
      permission: 'role:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        if (builtinById(params.id)) throw builtinModified();
        const role = await customOr404(auth.orgId, params.id);
        const members = await memberships.count(auth.orgId, { role: role.name });
        if (members > 0) {
          throw new ServiceError('conflict', `role "${role.name}" is held by ${members} member(s); give them another role first`, {
            members,
          });
        }
        // an invite carrying the role would otherwise be accepted into a role that no longer exists
        const open = await invites.findAll(auth.orgId, { role: role.name, accepted_at: null });
        const pendingInvites = open.filter((invite) => Date.parse(invite.expires_at) > clock.now()).length;
        if (pendingInvites > 0) {
          throw new ServiceError('conflict', `role "${role.name}" is used by ${pendingInvites} pending invite(s); revoke them first`, {
            invites: pendingInvites,
          });
        }
        await roles.delete(auth.orgId, role.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
