import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { asOrgId } from '../../runtime/store/types.js';
import { addMember } from '../helpers/members.js';
import { startTestServer, type Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const DAY_MS = 86_400_000;

describe('users, organizations and invites', () => {
  const ctx = useSuite(async (own) => {
    const server = own(await startTestServer());
    return { server };
  });

  const invite = async (session: Session, email: string, role: string) => {
    const response = await ctx.server.request('POST', '/platform/invites', { token: session.token, body: { email, role } });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: string; token: string; email: string; role: string; expires_at: string };
  };

  describe('organizations', () => {
    it('lists the organizations of the caller and creates another one', async () => {
      const alice = await ctx.server.register('Alice Inc');
      const list = await ctx.server.request('GET', '/platform/organizations', { token: alice.token });
      expectStatus(list, 200).toEqual({
        items: [{ id: alice.organization.id, name: 'Alice Inc', role: 'owner' }],
        next_cursor: null,
        total: 1,
      });

      const created = await ctx.server.request('POST', '/platform/organizations', { token: alice.token, body: { name: 'Alice Two' } });
      expectStatus(created, 201).toMatchObject({ name: 'Alice Two', role: 'owner' });
      expect(created.body.id).toMatch(/^org_/);

      const after = await ctx.server.request('GET', '/platform/organizations', { token: alice.token });
      expect(after.body.items).toEqual([
        { id: alice.organization.id, name: 'Alice Inc', role: 'owner' },
        { id: created.body.id, name: 'Alice Two', role: 'owner' },
      ]);

      for (const body of [{ name: '' }, { name: 'x'.repeat(201) }, {}, { name: 'ok', owner: 'me' }]) {
        const bad = await ctx.server.request('POST', '/platform/organizations', { token: alice.token, body });
        expect(bad.status, JSON.stringify(body)).toBe(400);
        expect(bad.body.error.code).toBe('validation_error');
      }
      expect((await ctx.server.request('GET', '/platform/organizations')).status).toBe(401);
    });

    it('refuses API keys on the organization routes', async () => {
      const alice = await ctx.server.register('Keyed');
      const key = await ctx.server.request('POST', '/api-keys', { token: alice.token, body: { name: 'k', permissions: ['realm:read'] } });
      for (const [method, body] of [
        ['GET', undefined],
        ['POST', { name: 'from a key' }],
      ] as const) {
        const response = await ctx.server.request(method, '/platform/organizations', { token: key.body.key, body });
        expectError(response, 403, 'forbidden');
      }
    });

    it('asks a user of two organizations to choose one at login, and scopes the token to the chosen one', async () => {
      const alice = await ctx.server.register('First Org');
      const second = await ctx.server.request('POST', '/platform/organizations', { token: alice.token, body: { name: 'Second Org' } });
      const secondId = second.body.id as string;

      const ambiguous = await ctx.server.request('POST', '/auth/login', { body: { email: alice.email, password: alice.password } });
      expectError(ambiguous, 400, 'organization_required');
      expect(ambiguous.body.error.details.organizations).toEqual([
        { id: alice.organization.id, name: 'First Org', role: 'owner' },
        { id: secondId, name: 'Second Org', role: 'owner' },
      ]);

      const chosen = await ctx.server.request('POST', '/auth/login', {
        body: { email: alice.email, password: alice.password, organization_id: secondId },
      });
      expect(chosen.status).toBe(200);
      expect(chosen.body.organization).toEqual({ id: secondId, name: 'Second Org' });
      const secondToken = chosen.body.token as string;

      expect((await ctx.server.request('POST', '/realms', { token: secondToken, body: { name: 'only-in-second' } })).status).toBe(201);
      const inSecond = await ctx.server.request('GET', '/realms', { token: secondToken });
      expect(inSecond.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default', 'only-in-second']);
      const inFirst = await ctx.server.request('GET', '/realms', { token: alice.token });
      expect(inFirst.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default']);

      const stranger = await ctx.server.register('Not Hers');
      const foreign = await ctx.server.request('POST', '/auth/login', {
        body: { email: alice.email, password: alice.password, organization_id: stranger.organization.id },
      });
      expectError(foreign, 400, 'organization_required');
    });
  });

  describe('invites', () => {
    it('invites a new email: a one-time token answered once, accepted into the organization', async () => {
      const alice = await ctx.server.register('Inviting Org');
      const before = Date.now();
      const created = await ctx.server.request('POST', '/platform/invites', {
        token: alice.token,
        body: { email: 'New.Person@Example.TEST', role: 'member' },
      });
      const after = Date.now();
      expect(created.status).toBe(201);
      const token = created.body.token as string;
      expect(token).toMatch(/^inv_[A-Za-z0-9]{40}$/);
      expect(created.body).toMatchObject({
        email: 'new.person@example.test',
        role: 'member',
        invited_by: alice.user.id,
        accepted_at: null,
      });
      expect(created.body).not.toHaveProperty('token_hash');
      const expiresAt = Date.parse(created.body.expires_at as string);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + 7 * DAY_MS);

      const pending = await ctx.server.request('GET', '/platform/invites', { token: alice.token });
      expect(pending.status).toBe(200);
      expect(pending.body.total).toBe(1);
      expect(pending.body.items[0]).toMatchObject({ id: created.body.id, email: 'new.person@example.test', role: 'member' });
      expect(pending.body.items[0]).not.toHaveProperty('token');
      expect(pending.text.includes(token)).toBe(false);
      expect(pending.text.includes(createHash('sha256').update(token).digest('hex'))).toBe(false);

      const accepted = await ctx.server.request('POST', '/auth/invites/accept', { body: { token, password: 'a new password' } });
      expect(accepted.status).toBe(201);
      expect(accepted.body.user).toMatchObject({ email: 'new.person@example.test', role: 'member' });
      expect(accepted.body.organization).toEqual({ id: alice.organization.id, name: 'Inviting Org' });
      const me = await ctx.server.request('GET', '/auth/me', { token: accepted.body.token });
      expect(me.body).toMatchObject({ email: 'new.person@example.test', role: 'member', kind: 'user' });

      const again = await ctx.server.request('POST', '/auth/invites/accept', { body: { token, password: 'a new password' } });
      expect(again.status).toBe(404);
      expect(again.body.error).toEqual({ code: 'not_found', message: 'invite not found or already used' });

      expect((await ctx.server.request('GET', '/platform/invites', { token: alice.token })).body.total).toBe(0);
      const login = await ctx.server.request('POST', '/auth/login', { body: { email: 'new.person@example.test', password: 'a new password' } });
      expect(login.status).toBe(200);
      expect(login.body.organization.id).toBe(alice.organization.id);
    });

    it('lets an existing user accept with their own password only', async () => {
      const alice = await ctx.server.register('Host Org');
      const bob = await ctx.server.register('Guest Home');
      const created = await invite(alice, bob.email.toUpperCase(), 'viewer');

      const wrong = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: created.token, password: 'not bobs password' } });
      expectError(wrong, 401, 'invalid_credentials');

      const accepted = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: created.token, password: bob.password } });
      expect(accepted.status).toBe(201);
      expect(accepted.body.user).toEqual({ id: bob.user.id, email: bob.email, role: 'viewer' });
      expect(accepted.body.organization.id).toBe(alice.organization.id);

      // the old token of bob still belongs to bob's own organization
      expect((await ctx.server.request('GET', '/auth/me', { token: bob.token })).body.organization.id).toBe(bob.organization.id);
      const login = await ctx.server.request('POST', '/auth/login', { body: { email: bob.email, password: bob.password } });
      expectError(login, 400, 'organization_required');
    });

    it('answers 409 when the invited user joined the organization meanwhile', async () => {
      const alice = await ctx.server.register('Joined Meanwhile');
      const bob = await ctx.server.register('Bob Elsewhere');
      const pending = await invite(alice, bob.email, 'viewer');
      // setup through the store: the membership appears while the invite is pending
      await ctx.server.service.services.collections.memberships.insert(asOrgId(alice.organization.id), { user_id: bob.user.id, role: 'member' });
      const response = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: pending.token, password: bob.password } });
      expectError(response, 409, 'conflict');
      expect((await ctx.server.request('GET', `/users/${bob.user.id}`, { token: alice.token })).body.role).toBe('member');
    });

    it('answers 404 for an unknown, expired or revoked invite', async () => {
      const alice = await ctx.server.register('Expiring Org');
      const unknown = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: `inv_${'a'.repeat(40)}`, password: 'whatever123' } });
      expectError(unknown, 404, 'not_found');

      const expiring = await invite(alice, 'late@example.test', 'member');
      await ctx.server.service.services.collections.invites.update(asOrgId(alice.organization.id), expiring.id, {
        expires_at: new Date(Date.now() - 1000).toISOString(),
      });
      const expired = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: expiring.token, password: 'late password' } });
      expect(expired.status).toBe(404);
      expect(expired.body.error).toEqual({ code: 'not_found', message: 'invite not found or already used' });
      // an expired invite no longer blocks a new one for the same email
      await invite(alice, 'late@example.test', 'member');

      const revoking = await invite(alice, 'revoked@example.test', 'member');
      expect((await ctx.server.request('DELETE', `/platform/invites/${revoking.id}`, { token: alice.token })).status).toBe(204);
      const revoked = await ctx.server.request('POST', '/auth/invites/accept', { body: { token: revoking.token, password: 'some password' } });
      expectError(revoked, 404, 'not_found');
      expect((await ctx.server.request('DELETE', `/platform/invites/${revoking.id}`, { token: alice.token })).status).toBe(404);
    });

    it('validates the invite and the acceptance', async () => {
      const alice = await ctx.server.register('Validating Org');
      const cases: [Record<string, unknown>, number, string][] = [
        [{ email: 'not-an-email', role: 'member' }, 400, 'validation_error'],
        [{ email: 'x@example.test', role: 'superuser' }, 400, 'validation_error'],
        [{ email: 'x@example.test' }, 400, 'validation_error'],
        [{ email: 'x@example.test', role: 'member', extra: true }, 400, 'validation_error'],
        [{ email: alice.email, role: 'member' }, 409, 'conflict'],
      ];
      for (const [body, status, code] of cases) {
        const response = await ctx.server.request('POST', '/platform/invites', { token: alice.token, body });
        expect(response.status, JSON.stringify(body)).toBe(status);
        expect(response.body.error.code).toBe(code);
      }
      await invite(alice, 'twice@example.test', 'member');
      const twice = await ctx.server.request('POST', '/platform/invites', { token: alice.token, body: { email: 'twice@example.test', role: 'viewer' } });
      expectError(twice, 409, 'conflict');

      const pending = await invite(alice, 'short@example.test', 'member');
      for (const body of [{ token: pending.token, password: 'short' }, { token: pending.token }, { password: 'long enough' }]) {
        const response = await ctx.server.request('POST', '/auth/invites/accept', { body });
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.error.code).toBe('validation_error');
      }
    });

    it('lets only an owner invite an owner, and no member invite anyone', async () => {
      const alice = await ctx.server.register('Owner Invites');
      const member = await addMember(ctx.server, alice, 'member');
      const byMember = await ctx.server.request('POST', '/platform/invites', { token: member.token, body: { email: 'm@example.test', role: 'viewer' } });
      expect(byMember.status).toBe(403);
      expect(byMember.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'user:manage' } });

      const admin = await addMember(ctx.server, alice, 'admin');
      const ownerByAdmin = await ctx.server.request('POST', '/platform/invites', { token: admin.token, body: { email: 'o@example.test', role: 'owner' } });
      expectError(ownerByAdmin, 403, 'forbidden');
      await invite(admin, 'viewer-by-admin@example.test', 'viewer');

      const coOwner = await addMember(ctx.server, alice, 'owner');
      expect(coOwner.user.role).toBe('owner');
    });

    it("keeps invites to their organization: another organization's invite is 404", async () => {
      const alice = await ctx.server.register('Invite Iso A');
      const bob = await ctx.server.register('Invite Iso B');
      const bobs = await invite(bob, 'bobs-guest@example.test', 'member');
      expect((await ctx.server.request('DELETE', `/platform/invites/${bobs.id}`, { token: alice.token })).status).toBe(404);
      expect((await ctx.server.request('GET', '/platform/invites', { token: alice.token })).body.total).toBe(0);
      expect((await ctx.server.request('GET', '/platform/invites', { token: bob.token })).body.total).toBe(1);
    });
  });

  describe('members', () => {
    it('lists and reads the members of the organization', async () => {
      const alice = await ctx.server.register('Members Org');
      const member = await addMember(ctx.server, alice, 'member', 'listed@example.test');
      const list = await ctx.server.request('GET', '/users', { token: alice.token });
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(2);
      expect(list.body.next_cursor).toBeNull();
      expect(list.body.items).toEqual([
        { id: alice.user.id, email: alice.email, role: 'owner', joined_at: expect.any(String) },
        { id: member.user.id, email: 'listed@example.test', role: 'member', joined_at: expect.any(String) },
      ]);
      const one = await ctx.server.request('GET', `/users/${member.user.id}`, { token: member.token });
      expectStatus(one, 200).toEqual(list.body.items[1]);

      const paged = await ctx.server.request('GET', '/users?limit=1', { token: alice.token });
      expect(paged.body.items.map((user: { id: string }) => user.id)).toEqual([alice.user.id]);
      const next = await ctx.server.request('GET', `/users?limit=1&cursor=${paged.body.next_cursor}`, { token: alice.token });
      expect(next.body.items.map((user: { id: string }) => user.id)).toEqual([member.user.id]);
    });

    it("changes a member's role, effective on their next request", async () => {
      const alice = await ctx.server.register('Role Change Org');
      const member = await addMember(ctx.server, alice, 'viewer');
      const write = await ctx.server.request('POST', '/realms', { token: member.token, body: { name: 'by-viewer' } });
      expect(write.status).toBe(403);

      const patched = await ctx.server.request('PATCH', `/users/${member.user.id}`, { token: alice.token, body: { role: 'admin' } });
      expectStatus(patched, 200).toMatchObject({ id: member.user.id, role: 'admin' });
      expect((await ctx.server.request('POST', '/realms', { token: member.token, body: { name: 'by-admin' } })).status).toBe(201);

      const unknown = await ctx.server.request('PATCH', `/users/${member.user.id}`, { token: alice.token, body: { role: 'emperor' } });
      expectError(unknown, 400, 'validation_error');
      const extra = await ctx.server.request('PATCH', `/users/${member.user.id}`, { token: alice.token, body: { role: 'viewer', email: 'x@y.z' } });
      expect(extra.status).toBe(400);

      const byMember = await addMember(ctx.server, alice, 'member');
      const forbidden = await ctx.server.request('PATCH', `/users/${member.user.id}`, { token: byMember.token, body: { role: 'viewer' } });
      expectError(forbidden, 403, 'forbidden');
    });

    it('keeps the last owner, and lets only owners change owners', async () => {
      const alice = await ctx.server.register('Owners Org');
      const demote = await ctx.server.request('PATCH', `/users/${alice.user.id}`, { token: alice.token, body: { role: 'admin' } });
      expectError(demote, 409, 'conflict');
      const remove = await ctx.server.request('DELETE', `/users/${alice.user.id}`, { token: alice.token });
      expectError(remove, 409, 'conflict');
      // repeating the same role is not a demotion
      expect((await ctx.server.request('PATCH', `/users/${alice.user.id}`, { token: alice.token, body: { role: 'owner' } })).status).toBe(200);

      const admin = await addMember(ctx.server, alice, 'admin');
      const coOwner = await addMember(ctx.server, alice, 'owner');
      const byAdmin = await ctx.server.request('PATCH', `/users/${coOwner.user.id}`, { token: admin.token, body: { role: 'viewer' } });
      expectError(byAdmin, 403, 'forbidden');
      expect((await ctx.server.request('DELETE', `/users/${coOwner.user.id}`, { token: admin.token })).status).toBe(403);
      const promote = await ctx.server.request('PATCH', `/users/${admin.user.id}`, { token: admin.token, body: { role: 'owner' } });
      expect(promote.status).toBe(403);

      // with two owners, one may step down
      const stepDown = await ctx.server.request('PATCH', `/users/${alice.user.id}`, { token: alice.token, body: { role: 'admin' } });
      expect(stepDown.status).toBe(200);
      expect(stepDown.body.role).toBe('admin');
      const last = await ctx.server.request('DELETE', `/users/${coOwner.user.id}`, { token: coOwner.token });
      expectError(last, 409, 'conflict');
    });

    it("removes the membership, not the user: the removed user's token answers 401 at once", async () => {
      const alice = await ctx.server.register('Removing Org');
      const bob = await ctx.server.register('Bob Home');
      await ctx.server.request('POST', '/auth/invites/accept', {
        body: { token: (await invite(alice, bob.email, 'member')).token, password: bob.password },
      });
      const inAlice = await ctx.server.request('POST', '/auth/login', {
        body: { email: bob.email, password: bob.password, organization_id: alice.organization.id },
      });
      const bobInAlice = inAlice.body.token as string;
      expect((await ctx.server.request('GET', '/realms', { token: bobInAlice })).status).toBe(200);

      const removed = await ctx.server.request('DELETE', `/users/${bob.user.id}`, { token: alice.token });
      expect(removed.status).toBe(204);
      const after = await ctx.server.request('GET', '/realms', { token: bobInAlice });
      expectError(after, 401, 'unauthorized');
      expect((await ctx.server.request('GET', `/users/${bob.user.id}`, { token: alice.token })).status).toBe(404);

      // bob still exists and still has his own organization
      const login = await ctx.server.request('POST', '/auth/login', { body: { email: bob.email, password: bob.password } });
      expect(login.status).toBe(200);
      expect(login.body.organization.id).toBe(bob.organization.id);
    });

    it('answers 404 for a user of another organization, on every verb', async () => {
      const alice = await ctx.server.register('Users Iso A');
      const carol = await ctx.server.register('Users Iso C');
      expect((await ctx.server.request('GET', `/users/${carol.user.id}`, { token: alice.token })).status).toBe(404);
      const patch = await ctx.server.request('PATCH', `/users/${carol.user.id}`, { token: alice.token, body: { role: 'viewer' } });
      expectError(patch, 404, 'not_found');
      expect((await ctx.server.request('DELETE', `/users/${carol.user.id}`, { token: alice.token })).status).toBe(404);
      const list = await ctx.server.request('GET', '/users', { token: alice.token });
      expect(list.body.items.map((user: { id: string }) => user.id)).toEqual([alice.user.id]);
      expect((await ctx.server.request('GET', `/users/${carol.user.id}`, { token: carol.token })).body.role).toBe('owner');
    });
  });
});
