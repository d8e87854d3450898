/**
 * /users: the members of the organization. Removing a member deletes the
 * membership, not the user (who may belong elsewhere); identity reads the
 * membership on every request, so the removed user's token stops at once.
 * An organization always keeps at least one owner, and only an owner can
 * change or remove an owner.
 */
import { z } from 'zod';
import type { Member } from '../../domains/users/service.js';
import { assertGrantable } from '../grants.js';
import { encodeCursor, listOptions, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const userSchema = z.object({ id: z.string(), email: z.string(), role: z.string(), joined_at: z.string() });

const present = ({ membership, user }: Member) => ({
  id: user.id,
  email: user.email,
  role: membership.role,
  joined_at: membership.created_at,
});

export function userRoutes({ users }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/users',
      tag: 'users',
      summary: 'Members of the organization',
      auth: 'bearer',
      permission: 'user:read',
      query: pageQuery,
      response: pageSchema(userSchema),
      handler: async ({ auth, query }) => {
        const page = await users.list(auth.orgId, listOptions(query));
        return {
          status: 200,
          json: {
            items: page.members.map(present),
            next_cursor: page.nextAfter === null ? null : encodeCursor(query, page.nextAfter),
            total: page.total,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/users/:id',
      tag: 'users',
      summary: 'A member of the organization',
      auth: 'bearer',
      permission: 'user:read',
      params: idParams,
      response: userSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await users.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/users/:id',
      tag: 'users',
      summary: "Change a member's role",
      auth: 'bearer',
      permission: 'user:manage',
      params: idParams,
      body: z.strictObject({ role: z.string().min(1).max(64) }),
      response: userSchema,
      handler: async ({ auth, params, body }) => ({
        status: 200,
        json: present(await users.changeRole(auth, params.id, body.role, (permissions) => assertGrantable(auth, permissions))),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/users/:id',
      tag: 'users',
      summary: 'Remove a member from the organization (the user account stays)',
      auth: 'bearer',
      permission: 'user:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await users.remove(auth, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
