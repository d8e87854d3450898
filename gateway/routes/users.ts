/**
 * /users: the members of the organization. Removing a member deletes the
 * membership, not the user (who may belong elsewhere); identity reads the
 * membership on every request, so the removed user's token stops at once.
 * An organization always keeps at least one owner, and only an owner can
 * change or remove an owner.
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { MembershipDoc, UserDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { assignableRole } from '../grants.js';
import { encodeCursor, listOptions, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const userSchema = z.object({ id: z.string(), email: z.string(), role: z.string(), joined_at: z.string() });

const present = (membership: MembershipDoc, user: UserDoc) => ({
  id: user.id,
  email: user.email,
  role: membership.role,
  joined_at: membership.created_at,
});

export function userRoutes({ collections }: Services): AnyRoute[] {
  const { memberships, users } = collections;

  /** The membership and user behind a user id, or 404 (also for a user of another organization). */
  async function memberOr404(auth: AuthContext, userId: string): Promise<{ membership: MembershipDoc; user: UserDoc }> {
    const membership = await memberships.findOne(auth.orgId, { user_id: userId });
    const user = membership ? await users.get(userId) : null;
    if (!membership || !user) throw new ServiceError('not_found', `user ${userId} not found`);
    return { membership, user };
  }

  /** Owners are changed only by owners, and the last one stays. */
  async function guardOwner(auth: AuthContext, membership: MembershipDoc, action: string): Promise<void> {
    if (membership.role !== 'owner') return;
    if (!(auth.kind === 'user' && auth.role === 'owner')) throw new ServiceError('forbidden', `only an owner can ${action} an owner`);
    if ((await memberships.count(auth.orgId, { role: 'owner' })) <= 1) {
      throw new ServiceError('conflict', `the last owner cannot be ${action === 'remove' ? 'removed' : 'demoted'}; make someone else owner first`);
    }
  }

  return [
    route({
      method: 'GET', path: '/users', tag: 'users', summary: 'Members of the organization', auth: 'bearer', permission: 'user:read',
      query: pageQuery, response: pageSchema(userSchema),
      handler: async ({ auth, query }) => {
        const page = await memberships.list(auth.orgId, listOptions(query));
        const found = await users.findAll({ id: { in: page.items.map((membership) => membership.user_id) } });
        const byId = new Map(found.map((user) => [user.id, user]));
        const items = page.items.flatMap((membership) => {
          const user = byId.get(membership.user_id);
          return user ? [present(membership, user)] : [];
        });
        return {
          status: 200,
          json: { items, next_cursor: page.nextAfter === null ? null : encodeCursor(query, page.nextAfter), total: page.total },
        };
      },
    }),
    route({
      method: 'GET', path: '/users/:id', tag: 'users', summary: 'A member of the organization', auth: 'bearer',
      permission: 'user:read', params: idParams, response: userSchema,
      handler: async ({ auth, params }) => {
        const { membership, user } = await memberOr404(auth, params.id);
        return { status: 200, json: present(membership, user) };
      },
    }),
    route({
      method: 'PATCH', path: '/users/:id', tag: 'users', summary: "Change a member's role", auth: 'bearer', permission: 'user:manage',
      params: idParams, body: z.strictObject({ role: z.string().min(1).max(64) }), response: userSchema,
      handler: async ({ auth, params, body }) => {
        const { membership, user } = await memberOr404(auth, params.id);
        const role = await assignableRole(collections, auth, body.role);
        if (role.name !== membership.role) await guardOwner(auth, membership, 'demote');
        const updated = await memberships.update(auth.orgId, membership.id, { role: role.name });
        if (!updated) throw new ServiceError('not_found', `user ${params.id} not found`);
        return { status: 200, json: present(updated, user) };
      },
    }),
    route({
      method: 'DELETE', path: '/users/:id', tag: 'users', summary: 'Remove a member from the organization (the user account stays)',
      auth: 'bearer', permission: 'user:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const { membership } = await memberOr404(auth, params.id);
        await guardOwner(auth, membership, 'remove');
        await memberships.delete(auth.orgId, membership.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
