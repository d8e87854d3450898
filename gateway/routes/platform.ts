/**
 * /platform: the caller's organizations and the invites of the current one,
 * plus the public `POST /auth/invites/accept` that redeems an invite token,
 * and for platform operators (PLATFORM_OPERATORS) every user of the service.
 * Invite tokens (`inv_` + 40 alphanumerics) are answered once and stored as
 * their sha256; they are single-use and valid for seven days.
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { PlatformUser } from '../../domains/platform/service.js';
import type { InviteDoc } from '../../domains/platform/service.js';
import { ServiceError } from '../../runtime/errors.js';
import { assertGrantable } from '../grants.js';
import { createPageResponder, decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { loginResult } from './auth.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { EMAIL, PASSWORD } from './auth.js';

const organizationSchema = z.object({ id: z.string(), name: z.string(), role: z.string() });

const inviteSchema = z.object({
  ...storedSchema,
  email: z.string(),
  role: z.string(),
  expires_at: z.string(),
  invited_by: z.string(),
  accepted_at: z.string().nullable(),
});

const platformUserSchema = z.object({
  ...storedSchema,
  email: z.string(),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), role: z.string(), joined_at: z.string() })),
});

const presentInvite = (invite: InviteDoc) => ({
  id: invite.id,
  email: invite.email,
  role: invite.role,
  expires_at: invite.expires_at,
  invited_by: invite.invited_by,
  accepted_at: invite.accepted_at,
  created_at: invite.created_at,
  updated_at: invite.updated_at,
});

const presentUser = ({ user, organizations }: PlatformUser) => ({
  id: user.id,
  email: user.email,
  created_at: user.created_at,
  updated_at: user.updated_at,
  organizations,
});

/** Organizations belong to people: an API key (scoped to one organization) may not list or create them. */
function requireUser(auth: AuthContext): void {
  if (auth.kind !== 'user') throw new ServiceError('forbidden', 'this route needs a user token, not an API key');
}

export function platformRoutes({ platform, identity }: Services): AnyRoute[] {
  const listPage = createPageResponder(platform.invites, presentInvite);

  /** Operator routes: a user token (never an API key, which belongs to one organization) of a user PLATFORM_OPERATORS names. */
  async function requireOperator(auth: AuthContext): Promise<void> {
    requireUser(auth);
    await platform.assertOperator(auth.userId);
  }

  return [
    route({
      method: 'GET',
      path: '/platform/users',
      tag: 'platform',
      auth: 'bearer',
      query: pageQuery,
      response: pageSchema(platformUserSchema),
      summary: 'Every user of the service with their organizations and roles, oldest first (platform operators only)',
      handler: async ({ auth, query }) => {
        await requireOperator(auth);
        const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
        const page = await platform.listUsers(query.limit, after);
        const last = page.users.at(-1);
        return {
          status: 200,
          json: {
            items: page.users.map(presentUser),
            next_cursor: last !== undefined && page.more ? encodeCursor(query, last.user.id) : null,
            total: page.total,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/platform/users/:id',
      tag: 'platform',
      auth: 'bearer',
      params: idParams,
      response: platformUserSchema,
      summary: 'One user with their organizations and roles (platform operators only)',
      handler: async ({ auth, params }) => {
        await requireOperator(auth);
        return { status: 200, json: presentUser(await platform.getUser(params.id)) };
      },
    }),
    route({
      method: 'GET',
      path: '/platform/organizations',
      tag: 'platform',
      summary: 'The organizations the caller belongs to',
      auth: 'bearer',
      response: pageSchema(organizationSchema),
      handler: async ({ auth }) => {
        requireUser(auth);
        const items = await platform.organizationsOf(auth.userId);
        return { status: 200, json: { items, next_cursor: null, total: items.length } };
      },
    }),
    route({
      method: 'POST',
      path: '/platform/organizations',
      tag: 'platform',
      summary: 'Create another organization owned by the caller',
      auth: 'bearer',
      body: z.strictObject({ name: safeName(z.string().trim().min(1).max(200)) }),
      response: organizationSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        requireUser(auth);
        const organization = await identity.createOrganization(body.name, auth.userId);
        return { status: 201, json: { id: organization.id, name: organization.name, role: 'owner' } };
      },
    }),
    route({
      method: 'POST',
      path: '/platform/invites',
      tag: 'platform',
      summary: 'Invite someone to this organization; the plaintext `token` is answered only here',
      auth: 'bearer',
      permission: 'user:manage',
      status: 201,
      creates: true,
      body: z.strictObject({ email: EMAIL, role: z.string().min(1).max(64) }),
      response: inviteSchema.extend({ token: z.string() }),
      handler: async ({ auth, body }) => {
        const { invite, token } = await platform.invite(auth, body.email, body.role, (permissions) => assertGrantable(auth, permissions));
        return { status: 201, json: { ...presentInvite(invite), token } };
      },
    }),
    route({
      method: 'GET',
      path: '/platform/invites',
      tag: 'platform',
      summary: 'Invites not yet accepted (expired ones included until revoked)',
      auth: 'bearer',
      permission: 'user:read',
      query: pageQuery,
      response: pageSchema(inviteSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query, { accepted_at: null }),
    }),
    route({
      method: 'DELETE',
      path: '/platform/invites/:id',
      tag: 'platform',
      summary: 'Revoke an invite',
      auth: 'bearer',
      permission: 'user:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await platform.revokeInvite(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/auth/invites/accept',
      tag: 'auth',
      auth: 'public',
      status: 201,
      summary: 'Redeem an invite token: joins the organization (creating the user if new); answers like login',
      body: z.strictObject({ token: z.string().min(1).max(200), password: PASSWORD }),
      response: loginResult,
      handler: async ({ body }) => ({ status: 201, json: await identity.acceptInvite(body) }),
    }),
  ];
}
