/**
 * API keys never reach past the people behind them: rotating, changing or
 * revoking a key needs every permission (and source) it holds, and a key
 * works at most with what its creator may do now (demoted: less; removed: 401).
 */
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { addMember, memberWithCustomRole } from '../helpers/members.js';
import type { Session } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

const ctx = useOneOrg({}, { name: 'Keys Security Org' });

async function createKey(token: string, permissions: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const response = await ctx.server.request('POST', '/api-keys', {
    token,
    body: { name: `k-${Math.random().toString(36).slice(2, 8)}`, permissions, ...extra },
  });
  expect(response.status, response.text).toBe(201);
  return { id: response.body.id as string, key: response.body.key as string };
}

/** A member holding a custom role with exactly these permissions. */
async function memberWith(permissions: string[]): Promise<Session> {
  const name = `r-${Math.random().toString(36).slice(2, 8)}`;
  const role = await ctx.server.request('POST', '/roles', { token: ctx.owner.token, body: { name, permissions } });
  expect(role.status, role.text).toBe(201);
  return addMember(ctx.server, ctx.owner, name);
}

const permissionsOf = async (key: string): Promise<string[]> => {
  const me = await ctx.server.request('GET', '/auth/me', { token: key });
  expect(me.status, me.text).toBe(200);
  return me.body.permissions as string[];
};

describe('managing a key needs everything the key holds', () => {
  it("a holder of api_key:manage alone cannot rotate, change or revoke an owner's org:manage key", async () => {
    const ownerKey = await createKey(ctx.owner.token, ['org:manage', 'api_key:manage', 'realm:read']);
    const manager = await memberWith(['api_key:read', 'api_key:manage']);

    const rotated = await ctx.server.request('POST', `/api-keys/${ownerKey.id}/rotate`, { token: manager.token });
    expectError(rotated, 403, 'forbidden');
    expect(rotated.body.error.details.permissions).toEqual(['org:manage', 'realm:read']);
    expect(rotated.text).not.toMatch(/sk_[A-Za-z0-9]{40}/);

    const renamed = await ctx.server.request('PATCH', `/api-keys/${ownerKey.id}`, { token: manager.token, body: { name: 'mine now' } });
    expect(renamed.status).toBe(403);
    const narrowed = await ctx.server.request('PATCH', `/api-keys/${ownerKey.id}`, { token: manager.token, body: { permissions: ['api_key:read'] } });
    expect(narrowed.status).toBe(403);
    const revoked = await ctx.server.request('DELETE', `/api-keys/${ownerKey.id}`, { token: manager.token });
    expect(revoked.status).toBe(403);

    // nothing changed: the old plaintext still works with all its permissions
    const stored = await ctx.server.request('GET', `/api-keys/${ownerKey.id}`, { token: ctx.owner.token });
    expect(stored.body).toMatchObject({ active: true, rotated_at: null, permissions: ['org:manage', 'api_key:manage', 'realm:read'] });
    // effective permissions: api_key:manage brings api_key:read
    expect(await permissionsOf(ownerKey.key)).toEqual(['api_key:manage', 'api_key:read', 'org:manage', 'realm:read']);
  });

  it('an admin (everything but org:manage) is refused on an org:manage key too, but manages keys it covers', async () => {
    const admin = await addMember(ctx.server, ctx.owner, 'admin');
    const wide = await createKey(ctx.owner.token, ['org:manage']);
    expect((await ctx.server.request('POST', `/api-keys/${wide.id}/rotate`, { token: admin.token })).status).toBe(403);
    expect((await ctx.server.request('DELETE', `/api-keys/${wide.id}`, { token: admin.token })).status).toBe(403);

    const narrow = await createKey(ctx.owner.token, ['realm:read', 'graph:read']);
    const rotated = await ctx.server.request('POST', `/api-keys/${narrow.id}/rotate`, { token: admin.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.key).not.toBe(narrow.key);
    const changed = await ctx.server.request('PATCH', `/api-keys/${narrow.id}`, { token: admin.token, body: { permissions: ['realm:read'] } });
    expect(changed.status, changed.text).toBe(200);
    expect((await ctx.server.request('DELETE', `/api-keys/${narrow.id}`, { token: admin.token })).status).toBe(200);
  });

  it('a key with api_key:manage manages only keys inside its own permissions', async () => {
    const managerKey = await createKey(ctx.owner.token, ['api_key:read', 'api_key:manage', 'realm:read']);
    const wider = await createKey(ctx.owner.token, ['realm:read', 'realm:manage']);
    const inside = await createKey(ctx.owner.token, ['realm:read']);
    expect((await ctx.server.request('POST', `/api-keys/${wider.id}/rotate`, { token: managerKey.key })).status).toBe(403);
    expect((await ctx.server.request('PATCH', `/api-keys/${wider.id}`, { token: managerKey.key, body: { name: 'x' } })).status).toBe(403);
    const rotated = await ctx.server.request('POST', `/api-keys/${inside.id}/rotate`, { token: managerKey.key });
    expect(rotated.status, rotated.text).toBe(200);
    expect(await permissionsOf(rotated.body.key as string)).toEqual(['realm:read']);
  });

  it('a source-scoped key cannot rotate or revoke a key that reaches other or all sources', async () => {
    const scoped = await createKey(ctx.owner.token, ['api_key:read', 'api_key:manage', 'source:read'], { source_ids: ['src_a'] });
    const unscoped = await createKey(ctx.owner.token, ['source:read']);
    const elsewhere = await createKey(ctx.owner.token, ['source:read'], { source_ids: ['src_b'] });
    const same = await createKey(ctx.owner.token, ['source:read'], { source_ids: ['src_a'] });
    for (const target of [unscoped, elsewhere]) {
      const response = await ctx.server.request('POST', `/api-keys/${target.id}/rotate`, { token: scoped.key });
      expect(response.status).toBe(403);
      expect((await ctx.server.request('DELETE', `/api-keys/${target.id}`, { token: scoped.key })).status).toBe(403);
    }
    expect((await ctx.server.request('DELETE', `/api-keys/${same.id}`, { token: scoped.key })).status).toBe(200);
  });

  it('creating or widening a key beyond the creator is refused (403)', async () => {
    const manager = await memberWith(['api_key:read', 'api_key:manage', 'realm:read']);
    const refused = await ctx.server.request('POST', '/api-keys', { token: manager.token, body: { name: 'escalate', permissions: ['org:manage'] } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details.permissions).toEqual(['org:manage']);
    const mixed = await ctx.server.request('POST', '/api-keys', { token: manager.token, body: { name: 'mixed', permissions: ['realm:read', 'user:manage'] } });
    expect(mixed.status).toBe(403);
    expect(mixed.body.error.details.permissions).toEqual(['user:manage']);

    const own = await createKey(manager.token, ['realm:read']);
    const widened = await ctx.server.request('PATCH', `/api-keys/${own.id}`, { token: manager.token, body: { permissions: ['realm:read', 'realm:manage'] } });
    expect(widened.status).toBe(403);
    expect(await permissionsOf(own.key)).toEqual(['realm:read']);
  });

  it("another organization's key stays 404 whatever the caller holds", async () => {
    const other = await ctx.server.register('Other Keys Org');
    const theirs = await createKey(other.token, ['realm:read']);
    expect((await ctx.server.request('POST', `/api-keys/${theirs.id}/rotate`, { token: ctx.owner.token })).status).toBe(404);
    expect((await ctx.server.request('DELETE', `/api-keys/${theirs.id}`, { token: ctx.owner.token })).status).toBe(404);
  });
});

describe("a key works with at most its creator's current permissions", () => {
  it('demoting the creator shrinks the key; restoring the role restores it', async () => {
    const admin = await addMember(ctx.server, ctx.owner, 'admin');
    const key = await createKey(admin.token, ['realm:read', 'realm:manage', 'user:read']);
    expect((await ctx.server.request('POST', '/realms', { token: key.key, body: { name: 'before-demotion' } })).status).toBe(201);

    expect((await ctx.server.request('PATCH', `/users/${admin.user.id}`, { token: ctx.owner.token, body: { role: 'viewer' } })).status).toBe(200);
    const refused = await ctx.server.request('POST', '/realms', { token: key.key, body: { name: 'after-demotion' } });
    expectError(refused, 403, 'forbidden');
    expect((await ctx.server.request('GET', '/realms', { token: key.key })).status).toBe(200);
    expect(await permissionsOf(key.key)).toEqual(['realm:read', 'user:read']);
    // the record keeps what it was given: the cut is applied per request, not written
    expect((await ctx.server.request('GET', `/api-keys/${key.id}`, { token: ctx.owner.token })).body.permissions).toEqual([
      'realm:read',
      'realm:manage',
      'user:read',
    ]);

    expect((await ctx.server.request('PATCH', `/users/${admin.user.id}`, { token: ctx.owner.token, body: { role: 'admin' } })).status).toBe(200);
    expect((await ctx.server.request('POST', '/realms', { token: key.key, body: { name: 'after-restore' } })).status).toBe(201);
    expect(await permissionsOf(key.key)).toEqual(['realm:manage', 'realm:read', 'user:read']);
  });

  it("changing the creator's custom role changes the key at once", async () => {
    const { member: maker, roleId } = await memberWithCustomRole(ctx.server, ctx.owner, 'keymaker', ['api_key:manage', 'realm:read', 'realm:manage']);
    const key = await createKey(maker.token, ['realm:read', 'realm:manage']);
    expect(await permissionsOf(key.key)).toEqual(['realm:manage', 'realm:read']);
    const patched = await ctx.server.request('PATCH', `/roles/${roleId}`, {
      token: ctx.owner.token,
      body: { permissions: ['api_key:manage', 'realm:read'] },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(await permissionsOf(key.key)).toEqual(['realm:read']);
  });

  it("removing the creator kills the key (401 api_key_revoked); the organization's other keys and another organization's keys keep working", async () => {
    const admin = await addMember(ctx.server, ctx.owner, 'admin');
    const doomed = await createKey(admin.token, ['realm:read']);
    const ownerKey = await createKey(ctx.owner.token, ['realm:read']);
    const other = await ctx.server.register('Unrelated Org');
    const otherKey = await createKey(other.token, ['realm:read']);
    expect((await ctx.server.request('GET', '/realms', { token: doomed.key })).status).toBe(200);

    expect((await ctx.server.request('DELETE', `/users/${admin.user.id}`, { token: ctx.owner.token })).status).toBe(204);
    for (const path of ['/realms', '/auth/me']) {
      const response = await ctx.server.request('GET', path, { token: doomed.key });
      expectError(response, 401, 'api_key_revoked');
    }
    expect((await ctx.server.request('GET', '/realms', { token: ownerKey.key })).status).toBe(200);
    expect((await ctx.server.request('GET', '/realms', { token: otherKey.key })).status).toBe(200);
  });

  it('a key made by a key answers for the user behind both', async () => {
    const admin = await addMember(ctx.server, ctx.owner, 'admin');
    const parent = await createKey(admin.token, ['api_key:manage', 'realm:read', 'realm:manage']);
    const child = await createKey(parent.key, ['realm:read', 'realm:manage']);
    expect((await ctx.server.request('GET', `/api-keys/${child.id}`, { token: ctx.owner.token })).body.created_by).toBe(admin.user.id);
    expect((await ctx.server.request('PATCH', `/users/${admin.user.id}`, { token: ctx.owner.token, body: { role: 'member' } })).status).toBe(200);
    expect(await permissionsOf(child.key)).toEqual(['realm:read']);
  });
});
