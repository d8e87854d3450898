import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { asOrgId } from '../../runtime/store/types.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const DAY_MS = 86_400_000;

describe('API keys', () => {
  const ctx = useTwoOrgs();

  const createKey = async (session: Session | string, body: Record<string, unknown>) => {
    const token = typeof session === 'string' ? session : session.token;
    const response = await ctx.server.request('POST', '/api-keys', { token, body });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: string; key: string; [field: string]: unknown };
  };

  it('creates a key whose plaintext is answered once and never listed', async () => {
    const created = await ctx.server.request('POST', '/api-keys', {
      token: ctx.alice.token,
      body: { name: 'ci reader', permissions: ['realm:read', 'realm:read', 'graph:read'] },
    });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    expect(key).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    expect(created.body).toMatchObject({
      name: 'ci reader',
      permissions: ['realm:read', 'graph:read'],
      source_ids: null,
      key_prefix: key.slice(0, 9),
      active: true,
      expires_in_days: null,
      expires_at: null,
      created_by: ctx.alice.user.id,
      revoked_at: null,
      rotated_at: null,
      last_used_at: null,
    });
    expect(created.body).not.toHaveProperty('key_hash');

    const hash = createHash('sha256').update(key).digest('hex');
    const list = await ctx.server.request('GET', '/api-keys', { token: ctx.alice.token });
    expect(list.status).toBe(200);
    const listed = list.body.items.find((item: { id: string }) => item.id === created.body.id);
    expect(listed).toMatchObject({ key_prefix: key.slice(0, 9), active: true, expires_at: null, revoked_at: null });
    expect(listed).not.toHaveProperty('key');
    expect(listed).not.toHaveProperty('key_hash');
    expect(list.text.includes(key)).toBe(false);
    expect(list.text.includes(hash)).toBe(false);

    const one = await ctx.server.request('GET', `/api-keys/${created.body.id}`, { token: ctx.alice.token });
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('key');
    expect(one.text.includes(hash)).toBe(false);
  });

  it('authenticates as Bearer on the API and reports itself on /auth/me', async () => {
    const created = await createKey(ctx.alice, { name: 'scoped', permissions: ['realm:read'], source_ids: ['src_a', 'src_b'] });
    const realms = await ctx.server.request('GET', '/realms', { token: created.key });
    expect(realms.status).toBe(200);
    expect(realms.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default']);

    const me = await ctx.server.request('GET', '/auth/me', { token: created.key });
    expectStatus(me, 200).toMatchObject({
      kind: 'api_key',
      permissions: ['realm:read'],
      source_ids: ['src_a', 'src_b'],
      api_key_id: created.id,
      organization: { id: ctx.alice.organization.id },
    });

    const used = await ctx.server.request('GET', `/api-keys/${created.id}`, { token: ctx.alice.token });
    expect(typeof used.body.last_used_at).toBe('string');
  });

  it('answers 403 when the key lacks the permission of a route', async () => {
    const created = await createKey(ctx.alice, { name: 'graph only', permissions: ['graph:read'] });
    const realms = await ctx.server.request('GET', '/realms', { token: created.key });
    expect(realms.status).toBe(403);
    expect(realms.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'realm:read' } });
    const keys = await ctx.server.request('GET', '/api-keys', { token: created.key });
    expectError(keys, 403, 'forbidden');
  });

  it('answers 401 for an unknown key', async () => {
    const response = await ctx.server.request('GET', '/realms', { token: `sk_${'A'.repeat(40)}` });
    expectError(response, 401, 'unauthorized');
  });

  it('validates the body and names an unknown permission', async () => {
    const unknown = await ctx.server.request('POST', '/api-keys', {
      token: ctx.alice.token,
      body: { name: 'bad', permissions: ['realm:read', 'realm:destroy'] },
    });
    expectError(unknown, 400, 'validation_error');
    expect(unknown.body.error.message).toContain('"realm:destroy"');
    expect(unknown.body.error.details.issues[0].path).toBe('permissions.1');

    const cases: Record<string, unknown>[] = [
      { name: '', permissions: [] },
      { name: 'x'.repeat(201), permissions: [] },
      { permissions: [] },
      { name: 'no permissions' },
      { name: 'zero', permissions: [], expires_in_days: 0 },
      { name: 'too long', permissions: [], expires_in_days: 3651 },
      { name: 'fraction', permissions: [], expires_in_days: 1.5 },
      { name: 'extra', permissions: [], key: 'sk_mine' },
      { name: 'sources', permissions: [], source_ids: 'src_a' },
    ];
    for (const body of cases) {
      const response = await ctx.server.request('POST', '/api-keys', { token: ctx.alice.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    await createKey(ctx.alice, { name: 'x'.repeat(200), permissions: [], expires_in_days: 3650 });
  });

  it('sets expires_at from expires_in_days', async () => {
    const before = Date.now();
    const created = await createKey(ctx.alice, { name: 'thirty days', permissions: ['realm:read'], expires_in_days: 30 });
    const after = Date.now();
    expect(created.expires_in_days).toBe(30);
    const expiresAt = Date.parse(created.expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(after + 30 * DAY_MS);
  });

  it('refuses to grant a permission the caller does not hold (403)', async () => {
    const manager = await createKey(ctx.alice, { name: 'manager', permissions: ['api_key:manage', 'realm:read'] });
    const wider = await ctx.server.request('POST', '/api-keys', {
      token: manager.key,
      body: { name: 'wider', permissions: ['realm:read', 'realm:manage'] },
    });
    expect(wider.status).toBe(403);
    expect(wider.body.error).toMatchObject({ code: 'forbidden', details: { permissions: ['realm:manage'] } });

    const narrower = await createKey(manager.key, { name: 'narrower', permissions: ['realm:read'] });
    expect(narrower.created_by).toBe(ctx.alice.user.id);

    const patched = await ctx.server.request('PATCH', `/api-keys/${narrower.id}`, {
      token: manager.key,
      body: { permissions: ['org:manage'] },
    });
    expectError(patched, 403, 'forbidden');
  });

  it('keeps a key made by a source-scoped key inside that scope', async () => {
    const scoped = await createKey(ctx.alice, { name: 'scoped manager', permissions: ['api_key:manage'], source_ids: ['src_a'] });
    const inherited = await createKey(scoped.key, { name: 'inherits', permissions: [] });
    expect(inherited.source_ids).toEqual(['src_a']);
    const outside = await ctx.server.request('POST', '/api-keys', {
      token: scoped.key,
      body: { name: 'escapes', permissions: [], source_ids: ['src_a', 'src_b'] },
    });
    expect(outside.status).toBe(403);
    expect(outside.body.error).toMatchObject({ code: 'forbidden', details: { source_ids: ['src_b'] } });
  });

  it('updates name, permissions and source_ids; expires_in_days is immutable', async () => {
    const created = await createKey(ctx.alice, { name: 'before', permissions: ['graph:read'], expires_in_days: 10 });
    const patched = await ctx.server.request('PATCH', `/api-keys/${created.id}`, {
      token: ctx.alice.token,
      body: { name: 'after', permissions: ['realm:read'], source_ids: ['src_x'], expires_in_days: 10 },
    });
    expectStatus(patched, 200).toMatchObject({ name: 'after', permissions: ['realm:read'], source_ids: ['src_x'], expires_in_days: 10 });
    expect(patched.body).not.toHaveProperty('key');

    // the new permissions hold from the next request
    expect((await ctx.server.request('GET', '/realms', { token: created.key })).status).toBe(200);

    const unscoped = await ctx.server.request('PATCH', `/api-keys/${created.id}`, { token: ctx.alice.token, body: { source_ids: null } });
    expect(unscoped.body.source_ids).toBeNull();

    const changed = await ctx.server.request('PATCH', `/api-keys/${created.id}`, { token: ctx.alice.token, body: { expires_in_days: 20 } });
    expect(changed.status).toBe(400);
    expect(changed.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'expires_in_days' } });
    const removed = await ctx.server.request('PATCH', `/api-keys/${created.id}`, { token: ctx.alice.token, body: { expires_in_days: null } });
    expectError(removed, 400, 'immutable_field');

    const badPermission = await ctx.server.request('PATCH', `/api-keys/${created.id}`, {
      token: ctx.alice.token,
      body: { permissions: ['nope'] },
    });
    expect(badPermission.status).toBe(400);
    expect(badPermission.body.error.message).toContain('"nope"');
  });

  it('rotates: a new key once, the old key answers 401 from then on', async () => {
    const created = await createKey(ctx.alice, { name: 'rotating', permissions: ['realm:read'] });
    const rotated = await ctx.server.request('POST', `/api-keys/${created.id}/rotate`, { token: ctx.alice.token });
    expect(rotated.status).toBe(200);
    const newKey = rotated.body.key as string;
    expect(newKey).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    expect(newKey).not.toBe(created.key);
    expect(rotated.body).toMatchObject({ id: created.id, key_prefix: newKey.slice(0, 9), active: true });
    expect(typeof rotated.body.rotated_at).toBe('string');

    const old = await ctx.server.request('GET', '/realms', { token: created.key });
    expectError(old, 401, 'unauthorized');
    expect((await ctx.server.request('GET', '/realms', { token: newKey })).status).toBe(200);

    const shown = await ctx.server.request('GET', `/api-keys/${created.id}`, { token: ctx.alice.token });
    expect(shown.body).not.toHaveProperty('key');
    expect(shown.body.key_prefix).toBe(newKey.slice(0, 9));
  });

  it('revokes softly: kept and listed with active false; the key answers 401 api_key_revoked', async () => {
    const created = await createKey(ctx.alice, { name: 'to revoke', permissions: ['realm:read'] });
    expect((await ctx.server.request('GET', '/realms', { token: created.key })).status).toBe(200);

    const revoked = await ctx.server.request('DELETE', `/api-keys/${created.id}`, { token: ctx.alice.token });
    expectStatus(revoked, 200).toMatchObject({ id: created.id, name: 'to revoke', active: false });
    expect(typeof revoked.body.revoked_at).toBe('string');
    expect(revoked.body).not.toHaveProperty('key');

    const refused = await ctx.server.request('GET', '/realms', { token: created.key });
    expectError(refused, 401, 'api_key_revoked');

    const list = await ctx.server.request('GET', '/api-keys?limit=200', { token: ctx.alice.token });
    const listed = list.body.items.find((item: { id: string }) => item.id === created.id);
    expect(listed).toMatchObject({ active: false, revoked_at: revoked.body.revoked_at });

    const again = await ctx.server.request('DELETE', `/api-keys/${created.id}`, { token: ctx.alice.token });
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

    const rotate = await ctx.server.request('POST', `/api-keys/${created.id}/rotate`, { token: ctx.alice.token });
    expectError(rotate, 409, 'conflict');
    expect((await ctx.server.request('GET', '/realms', { token: created.key })).status).toBe(401);
  });

  it('answers 401 for an expired key, and refuses to rotate it', async () => {
    const created = await createKey(ctx.alice, { name: 'short lived', permissions: ['realm:read'], expires_in_days: 1 });
    expect((await ctx.server.request('GET', '/realms', { token: created.key })).status).toBe(200);
    await ctx.server.service.services.collections.apiKeys.update(asOrgId(ctx.alice.organization.id), created.id, {
      expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    const expired = await ctx.server.request('GET', '/realms', { token: created.key });
    expectError(expired, 401, 'api_key_revoked');
    const rotate = await ctx.server.request('POST', `/api-keys/${created.id}/rotate`, { token: ctx.alice.token });
    expectError(rotate, 409, 'conflict');
  });

  it('replays a create with the same Idempotency-Key instead of making a second key', async () => {
    const headers = { 'idempotency-key': `key-${randomBytes(6).toString('hex')}` };
    const body = { name: 'idempotent', permissions: ['realm:read'] };
    const first = await ctx.server.request('POST', '/api-keys', { token: ctx.bob.token, body, headers });
    const second = await ctx.server.request('POST', '/api-keys', { token: ctx.bob.token, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    const list = await ctx.server.request('GET', '/api-keys', { token: ctx.bob.token });
    expect(list.body.items.filter((item: { name: string }) => item.name === 'idempotent')).toHaveLength(1);
  });

  it('pages the list', async () => {
    const fresh = await ctx.server.register('Pager');
    for (const name of ['k1', 'k2', 'k3']) await createKey(fresh, { name, permissions: [] });
    const first = await ctx.server.request('GET', '/api-keys?limit=2', { token: fresh.token });
    expect(first.body.items.map((item: { name: string }) => item.name)).toEqual(['k1', 'k2']);
    expect(first.body.total).toBe(3);
    const second = await ctx.server.request('GET', `/api-keys?limit=2&cursor=${first.body.next_cursor}`, { token: fresh.token });
    expect(second.body.items.map((item: { name: string }) => item.name)).toEqual(['k3']);
    expect(second.body.next_cursor).toBeNull();
  });

  it("answers 404 for another organization's key, on every verb", async () => {
    const bobs = await createKey(ctx.bob, { name: 'bobs key', permissions: ['realm:read'] });
    const id = bobs.id;
    expect((await ctx.server.request('GET', `/api-keys/${id}`, { token: ctx.alice.token })).status).toBe(404);
    const patch = await ctx.server.request('PATCH', `/api-keys/${id}`, { token: ctx.alice.token, body: { name: 'mine now' } });
    expectError(patch, 404, 'not_found');
    expect((await ctx.server.request('POST', `/api-keys/${id}/rotate`, { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('DELETE', `/api-keys/${id}`, { token: ctx.alice.token })).status).toBe(404);
    const aliceList = await ctx.server.request('GET', '/api-keys?limit=200', { token: ctx.alice.token });
    expect(aliceList.body.items.some((item: { id: string }) => item.id === id)).toBe(false);

    // bob's key still works and sees bob's organization only
    const me = await ctx.server.request('GET', '/auth/me', { token: bobs.key });
    expect(me.body.organization.id).toBe(ctx.bob.organization.id);
    expect((await ctx.server.request('GET', `/api-keys/${id}`, { token: ctx.bob.token })).body.name).toBe('bobs key');
  });
});
