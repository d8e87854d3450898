import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { ALL_PERMISSIONS, BUILTIN_ROLES } from '../../runtime/auth/permissions.js';
import { addMember } from '../helpers/members.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const BUILTIN_IDS = BUILTIN_ROLES.map((role) => `builtin:${role.name}`);

describe('roles', () => {
  const ctx = useTwoOrgs();

  const createRole = async (session: Session, body: Record<string, unknown>) => {
    const response = await ctx.server.request('POST', '/roles', { token: session.token, body });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: string; name: string; permissions: string[] };
  };

  it('lists the built-ins first, then the custom roles', async () => {
    const fresh = await ctx.server.register('Roles Listing');
    const before = await ctx.server.request('GET', '/roles', { token: fresh.token });
    expect(before.status).toBe(200);
    expect(before.body.items.map((role: { id: string }) => role.id)).toEqual(BUILTIN_IDS);
    expect(before.body.total).toBe(BUILTIN_ROLES.length);
    expect(before.body.next_cursor).toBeNull();
    expect(before.body.items[0]).toEqual({
      id: 'builtin:owner',
      name: 'owner',
      description: BUILTIN_ROLES[0]?.description,
      permissions: ALL_PERMISSIONS,
      is_builtin: true,
      created_at: null,
      updated_at: null,
    });

    const auditor = await createRole(fresh, { name: 'auditor', description: 'reads keys', permissions: ['api_key:read'] });
    const after = await ctx.server.request('GET', '/roles', { token: fresh.token });
    expect(after.body.items.map((role: { name: string }) => role.name)).toEqual(['owner', 'admin', 'member', 'viewer', 'auditor']);
    expect(after.body.items[4]).toMatchObject({ id: auditor.id, is_builtin: false, description: 'reads keys' });
    expect(after.body.total).toBe(5);
  });

  it('pages across the built-ins and the custom roles', async () => {
    const fresh = await ctx.server.register('Roles Paging');
    await createRole(fresh, { name: 'c1', permissions: [] });
    await createRole(fresh, { name: 'c2', permissions: [] });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = cursor === null ? '/roles?limit=3' : `/roles?limit=3&cursor=${cursor}`;
      const page = await ctx.server.request('GET', path, { token: fresh.token });
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(6);
      seen.push(...page.body.items.map((role: { name: string }) => role.name));
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(seen).toEqual(['owner', 'admin', 'member', 'viewer', 'c1', 'c2']);
    expect(pages).toBe(2);

    // a page that ends exactly on the last built-in still points at the custom roles
    const four = await ctx.server.request('GET', '/roles?limit=4', { token: fresh.token });
    expect(four.body.items.map((role: { name: string }) => role.name)).toEqual(['owner', 'admin', 'member', 'viewer']);
    const rest = await ctx.server.request('GET', `/roles?limit=4&cursor=${four.body.next_cursor}`, { token: fresh.token });
    expect(rest.body.items.map((role: { name: string }) => role.name)).toEqual(['c1', 'c2']);
    expect(rest.body.next_cursor).toBeNull();

    const bad = await ctx.server.request('GET', '/roles?cursor=not-a-cursor', { token: fresh.token });
    expectError(bad, 400, 'invalid_cursor');
  });

  it('serves the permission catalog', async () => {
    const response = await ctx.server.request('GET', '/roles/permissions', { token: ctx.alice.token });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(ALL_PERMISSIONS.length);
    expect(response.body.items.map((item: { name: string }) => item.name)).toEqual(ALL_PERMISSIONS);
    expect(response.body.items.find((item: { name: string }) => item.name === 'realm:read')).toEqual({
      name: 'realm:read',
      description: 'read realms',
      implies: [],
    });
    // changing a thing means seeing it: the catalog says what each permission brings along
    const implies = (name: string) => response.body.items.find((item: { name: string }) => item.name === name).implies;
    expect(implies('source:manage')).toEqual(['source:read']);
    expect(implies('graph:write')).toEqual(['graph:read']);
    expect(implies('file:write')).toEqual(['file:read']);
    expect(implies('org:manage')).toEqual([]);
    expect(implies('chat:use')).toEqual([]);
  });

  it('creates, reads, updates and deletes a custom role', async () => {
    const created = await ctx.server.request('POST', '/roles', {
      token: ctx.alice.token,
      body: { name: 'release-manager', description: 'ships things', permissions: ['task:manage', 'task:read'] },
    });
    expectStatus(created, 201).toMatchObject({
      name: 'release-manager',
      description: 'ships things',
      permissions: ['task:manage', 'task:read'],
      is_builtin: false,
    });
    const id = created.body.id as string;
    expect(id).toMatch(/^rol_/);

    expect((await ctx.server.request('GET', `/roles/${id}`, { token: ctx.alice.token })).body.name).toBe('release-manager');
    const builtin = await ctx.server.request('GET', '/roles/builtin:viewer', { token: ctx.alice.token });
    expectStatus(builtin, 200).toMatchObject({ name: 'viewer', is_builtin: true });

    const patched = await ctx.server.request('PATCH', `/roles/${id}`, {
      token: ctx.alice.token,
      body: { description: 'ships more', permissions: ['task:read'], name: 'release-manager' },
    });
    expectStatus(patched, 200).toMatchObject({ name: 'release-manager', description: 'ships more', permissions: ['task:read'] });

    const deleted = await ctx.server.request('DELETE', `/roles/${id}`, { token: ctx.alice.token });
    expect(deleted.status).toBe(204);
    expect((await ctx.server.request('GET', `/roles/${id}`, { token: ctx.alice.token })).status).toBe(404);
  });

  it('validates names and permissions', async () => {
    for (const name of ['Upper', 'has space', '-leading', '', 'x'.repeat(65), 'dot.ted']) {
      const response = await ctx.server.request('POST', '/roles', { token: ctx.alice.token, body: { name, permissions: [] } });
      expectError(response, 400, 'validation_error');
    }
    const unknown = await ctx.server.request('POST', '/roles', {
      token: ctx.alice.token,
      body: { name: 'typo', permissions: ['realm:read', 'realms:read'] },
    });
    expectError(unknown, 400, 'validation_error');
    expect(unknown.body.error.message).toContain('"realms:read"');
    const extra = await ctx.server.request('POST', '/roles', { token: ctx.alice.token, body: { name: 'extra', permissions: [], is_builtin: true } });
    expect(extra.status).toBe(400);
  });

  it('answers 409 for a built-in name and for a duplicate', async () => {
    for (const name of ['owner', 'admin', 'member', 'viewer', 'api_key']) {
      const response = await ctx.server.request('POST', '/roles', { token: ctx.alice.token, body: { name, permissions: [] } });
      expectError(response, 409, 'conflict');
    }
    await createRole(ctx.alice, { name: 'twice', permissions: [] });
    const again = await ctx.server.request('POST', '/roles', { token: ctx.alice.token, body: { name: 'twice', permissions: [] } });
    expectError(again, 409, 'conflict');
    // the same name in another organization is fine
    await createRole(ctx.bob, { name: 'twice', permissions: [] });
  });

  it('keeps built-ins fixed (409) and the name of a custom role immutable (400)', async () => {
    for (const id of BUILTIN_IDS) {
      const patch = await ctx.server.request('PATCH', `/roles/${id}`, { token: ctx.alice.token, body: { description: 'mine' } });
      expect(patch.status, id).toBe(409);
      expect(patch.body.error).toMatchObject({ code: 'conflict', message: 'built-in roles cannot be modified' });
      const remove = await ctx.server.request('DELETE', `/roles/${id}`, { token: ctx.alice.token });
      expect(remove.status, id).toBe(409);
      expect(remove.body.error).toMatchObject({ code: 'conflict', message: 'built-in roles cannot be modified' });
    }
    const owner = await ctx.server.request('GET', '/roles/builtin:owner', { token: ctx.alice.token });
    expect(owner.body.description).toBe(BUILTIN_ROLES[0]?.description);

    const custom = await createRole(ctx.alice, { name: 'fixed-name', permissions: [] });
    const renamed = await ctx.server.request('PATCH', `/roles/${custom.id}`, { token: ctx.alice.token, body: { name: 'other' } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'name' } });
  });

  it('applies a changed custom role on the next request of a member holding it', async () => {
    const reader = await createRole(ctx.alice, { name: 'realm-reader', permissions: ['realm:read'] });
    const member = await addMember(ctx.server, ctx.alice, 'realm-reader');
    expect(member.user.role).toBe('realm-reader');
    expect((await ctx.server.request('GET', '/realms', { token: member.token })).status).toBe(200);
    const denied = await ctx.server.request('GET', '/users', { token: member.token });
    expectError(denied, 403, 'forbidden');

    await ctx.server.request('PATCH', `/roles/${reader.id}`, { token: ctx.alice.token, body: { permissions: ['realm:read', 'user:read'] } });
    expect((await ctx.server.request('GET', '/users', { token: member.token })).status).toBe(200);

    await ctx.server.request('PATCH', `/roles/${reader.id}`, { token: ctx.alice.token, body: { permissions: [] } });
    expect((await ctx.server.request('GET', '/realms', { token: member.token })).status).toBe(403);
    const me = await ctx.server.request('GET', '/auth/me', { token: member.token });
    expect(me.body).toMatchObject({ role: 'realm-reader', permissions: [] });
  });

  it('refuses to delete a custom role held by a member or a pending invite (409)', async () => {
    const held = await createRole(ctx.alice, { name: 'held', permissions: ['realm:read'] });
    const member = await addMember(ctx.server, ctx.alice, 'held');
    const refused = await ctx.server.request('DELETE', `/roles/${held.id}`, { token: ctx.alice.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { members: 1 } });

    await ctx.server.request('PATCH', `/users/${member.user.id}`, { token: ctx.alice.token, body: { role: 'viewer' } });
    expect((await ctx.server.request('DELETE', `/roles/${held.id}`, { token: ctx.alice.token })).status).toBe(204);

    const invited = await createRole(ctx.alice, { name: 'invited', permissions: [] });
    const invite = await ctx.server.request('POST', '/platform/invites', {
      token: ctx.alice.token,
      body: { email: 'role-invitee@example.test', role: 'invited' },
    });
    expect(invite.status).toBe(201);
    const blocked = await ctx.server.request('DELETE', `/roles/${invited.id}`, { token: ctx.alice.token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toMatchObject({ code: 'conflict', details: { invites: 1 } });
  });

  it('needs role:read to list and role:manage to change; nobody grants more than they hold', async () => {
    const member = await addMember(ctx.server, ctx.alice, 'member');
    expect((await ctx.server.request('GET', '/roles', { token: member.token })).status).toBe(200);
    const create = await ctx.server.request('POST', '/roles', { token: member.token, body: { name: 'nope', permissions: [] } });
    expect(create.status).toBe(403);
    expect(create.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'role:manage' } });

    const admin = await addMember(ctx.server, ctx.alice, 'admin');
    const escalate = await ctx.server.request('POST', '/roles', {
      token: admin.token,
      body: { name: 'almost-owner', permissions: ['org:manage', 'realm:read'] },
    });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error).toMatchObject({ code: 'forbidden', details: { permissions: ['org:manage'] } });
    const allowed = await createRole(admin, { name: 'admin-made', permissions: ['realm:read'] });
    const widen = await ctx.server.request('PATCH', `/roles/${allowed.id}`, { token: admin.token, body: { permissions: ['org:manage'] } });
    expectError(widen, 403, 'forbidden');
  });

  it("answers 404 for another organization's role, on every verb", async () => {
    const bobs = await createRole(ctx.bob, { name: 'bobs-role', permissions: [] });
    expect((await ctx.server.request('GET', `/roles/${bobs.id}`, { token: ctx.alice.token })).status).toBe(404);
    const patch = await ctx.server.request('PATCH', `/roles/${bobs.id}`, { token: ctx.alice.token, body: { description: 'x' } });
    expectError(patch, 404, 'not_found');
    expect((await ctx.server.request('DELETE', `/roles/${bobs.id}`, { token: ctx.alice.token })).status).toBe(404);
    const list = await ctx.server.request('GET', '/roles?limit=200', { token: ctx.alice.token });
    expect(list.body.items.some((role: { id: string }) => role.id === bobs.id)).toBe(false);
    expect((await ctx.server.request('GET', `/roles/${bobs.id}`, { token: ctx.bob.token })).status).toBe(200);
    // a role name of another organization cannot be handed out either
    const invite = await ctx.server.request('POST', '/platform/invites', {
      token: ctx.alice.token,
      body: { email: 'cross-org@example.test', role: 'bobs-role' },
    });
    expectError(invite, 400, 'validation_error');
  });
});
