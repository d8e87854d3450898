/**
 * /platform: the caller's organizations and the invites of the current one,
 * plus the public `POST /auth/invites/accept` that redeems an invite token,
 * and for platform operators (PLATFORM_OPERATORS) every user of the service.
 * Invite tokens (`inv_` + 40 alphanumerics) are answered once and stored as
 * their sha256; they are single-use and valid for seven days.
 */
import { z } from 'zod';
import type { AuthContext } from '../../runtime/auth/context.js';
import { IdentityService, normalizeEmail } from '../../runtime/auth/identity.js';
import type { InviteDoc, UserDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { assignableRole } from '../grants.js';
import { createPageResponder, decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404 } from '../../runtime/store/documents.js';
import { loginResult } from './auth.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { EMAIL, PASSWORD } from './auth.js';
import { isoAt } from '../../runtime/clock.js';

const INVITE_TTL_MS = 7 * 86_400_000;
/** the login lookup reads at most this many memberships of one user */
const MAX_MEMBERSHIPS = 1000;

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


/** Organizations belong to people: an API key (scoped to one organization) may not list or create them. */
function requireUser(auth: AuthContext): void {
  if (auth.kind !== 'user') throw new ServiceError('forbidden', 'this route needs a user token, not an API key');
}

export function platformRoutes({ collections, identity, config, clock }: Services): AnyRoute[] {
  const { invites, memberships, organizations, users } = collections;
  const listPage = createPageResponder(invites, presentInvite);
  const operators = new Set(config.platformOperators);

  /** Operator routes: a user token (never an API key, which belongs to one organization) of a user PLATFORM_OPERATORS names. */
  async function requireOperator(auth: AuthContext): Promise<void> {
    requireUser(auth);
    const caller = await users.get(auth.userId);
    if (!caller || !operators.has(caller.email)) {
      throw new ServiceError('forbidden', 'only platform operators (PLATFORM_OPERATORS) may read the users of every organization');
    }
  }

  /** Each user with the organizations they belong to and their role there. */
  async function presentUsers(found: readonly UserDoc[]): Promise<z.output<typeof platformUserSchema>[]> {
    if (found.length === 0) return [];
    const mine = await memberships.findAcrossOrgs({ user_id: { in: found.map((user) => user.id) } }, found.length * MAX_MEMBERSHIPS);
    const orgs = await organizations.findAll({ id: { in: [...new Set(mine.map((membership) => membership.org_id))] } });
    const names = new Map(orgs.map((organization) => [organization.id, organization.name]));
    return found.map((user) => ({
      id: user.id,
      email: user.email,
      created_at: user.created_at,
      updated_at: user.updated_at,
      organizations: mine
        .filter((membership) => membership.user_id === user.id && names.has(membership.org_id))
        .map((membership) => ({ id: membership.org_id, name: names.get(membership.org_id) ?? '', role: membership.role, joined_at: membership.created_at }))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    }));
  }

  return [
    route({
      method: 'GET', path: '/platform/users', tag: 'platform', auth: 'bearer', query: pageQuery, response: pageSchema(platformUserSchema),
      summary: 'Every user of the service with their organizations and roles, oldest first (platform operators only)',
      handler: async ({ auth, query }) => {
        await requireOperator(auth);
        // users are global records without a paged list: ids sort by creation, so the keyset cursor is the last id
        const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
        const all = (await users.findAll()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const rest = after === null ? all : all.filter((user) => user.id > after);
        const page = rest.slice(0, query.limit);
        const last = page.at(-1);
        return {
          status: 200,
          json: {
            items: await presentUsers(page),
            next_cursor: last !== undefined && rest.length > page.length ? encodeCursor(query, last.id) : null,
            total: all.length,
          },
        };
      },
    }),
    route({
      method: 'GET', path: '/platform/users/:id', tag: 'platform', auth: 'bearer', params: idParams, response: platformUserSchema,
      summary: 'One user with their organizations and roles (platform operators only)',
      handler: async ({ auth, params }) => {
        await requireOperator(auth);
        const user = await users.get(params.id);
        if (!user) throw new ServiceError('not_found', `user ${params.id} not found`);
        const [presented] = await presentUsers([user]);
        return { status: 200, json: presented };
      },
    }),
    route({
      method: 'GET', path: '/platform/organizations', tag: 'platform', summary: 'The organizations the caller belongs to',
      auth: 'bearer', response: pageSchema(organizationSchema),
      handler: async ({ auth }) => {
        requireUser(auth);
        const mine = await memberships.findAcrossOrgs({ user_id: auth.userId }, MAX_MEMBERSHIPS);
        const found = await organizations.findAll({ id: { in: mine.map((membership) => membership.org_id) } });
        const names = new Map(found.map((organization) => [organization.id, organization.name]));
        const items = mine.flatMap((membership) => {
          const name = names.get(membership.org_id);
          return name === undefined ? [] : [{ id: membership.org_id, name, role: membership.role }];
        });
        return { status: 200, json: { items, next_cursor: null, total: items.length } };
      },
    }),
    route({
      method: 'POST', path: '/platform/organizations', tag: 'platform', summary: 'Create another organization owned by the caller',
      auth: 'bearer', body: z.strictObject({ name: safeName(z.string().trim().min(1).max(200)) }), response: organizationSchema,
      status: 201, creates: true,
      handler: async ({ auth, body }) => {
        requireUser(auth);
        const organization = await identity.createOrganization(body.name, auth.userId);
        return { status: 201, json: { id: organization.id, name: organization.name, role: 'owner' } };
      },
    }),
    route({
      method: 'POST', path: '/platform/invites', tag: 'platform',
      summary: 'Invite someone to this organization; the plaintext `token` is answered only here',
      auth: 'bearer', permission: 'user:manage', status: 201, creates: true,
      body: z.strictObject({ email: EMAIL, role: z.string().min(1).max(64) }),
      response: inviteSchema.extend({ token: z.string() }),
      handler: async ({ auth, body }) => {
        const role = await assignableRole(collections, auth, body.role);
        const email = normalizeEmail(body.email);
        const existing = await users.findOne({ email });
        if (existing && (await memberships.findOne(auth.orgId, { user_id: existing.id }))) {
          throw new ServiceError('conflict', 'this user already belongs to the organization', { fields: ['email'] });
        }
        const open = await invites.findAll(auth.orgId, { email, accepted_at: null });
        if (open.some((invite) => Date.parse(invite.expires_at) > clock.now())) {
          throw new ServiceError('conflict', 'a pending invite for this email exists; revoke it first', { fields: ['email'] });
        }
        const { token, hash } = IdentityService.newInviteToken();
        const invite = await invites.insert(auth.orgId, {
          email,
          role: role.name,
          token_hash: hash,
          expires_at: isoAt(clock.now() + INVITE_TTL_MS),
          invited_by: auth.userId,
          accepted_at: null,
        });
        return { status: 201, json: { ...presentInvite(invite), token } };
      },
    }),
    route({
      method: 'GET', path: '/platform/invites', tag: 'platform', summary: 'Invites not yet accepted (expired ones included until revoked)',
      auth: 'bearer', permission: 'user:read', query: pageQuery, response: pageSchema(inviteSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query, { accepted_at: null }),
    }),
    route({
      method: 'DELETE', path: '/platform/invites/:id', tag: 'platform', summary: 'Revoke an invite', auth: 'bearer',
      permission: 'user:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const invite = await getOr404(invites, auth.orgId, params.id, 'invite');
        if (invite.accepted_at !== null) throw new ServiceError('conflict', 'this invite was already accepted', { id: invite.id });
        await invites.delete(auth.orgId, invite.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST', path: '/auth/invites/accept', tag: 'auth', auth: 'public', status: 201,
      summary: 'Redeem an invite token: joins the organization (creating the user if new); answers like login',
      body: z.strictObject({ token: z.string().min(1).max(200), password: PASSWORD }),
      response: loginResult,
      handler: async ({ body }) => ({ status: 201, json: await identity.acceptInvite(body) }),
    }),
  ];
}
