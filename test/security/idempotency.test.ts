/**
 * Idempotency records belong to the caller who made them: another member (or
 * an API key) sending the same Idempotency-Key and body creates its own
 * resource and never receives the first caller's response, which may hold a
 * plaintext secret. The same caller retrying gets the original response.
 */
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { oneOrg } from '../helpers/orgs.js';
import { expectError } from '../helpers/expect-status.js';

const ctx = useSuite(async (own) => {
  const { server, owner } = ownOrgs(own, await oneOrg({}, { name: 'Idempotency Org' }));
  const admin = await addMember(server, owner, 'admin');
  return { server, owner, admin };
});

const createKey = (token: string, idempotencyKey: string, body: Record<string, unknown> = { name: 'deploy bot', permissions: ['realm:read'] }) =>
  ctx.server.request('POST', '/api-keys', { token, body, headers: { 'idempotency-key': idempotencyKey } });

describe('Idempotency-Key is scoped to the caller', () => {
  it("two members with the same key and body each get their own API key; neither sees the other's plaintext", async () => {
    const first = await createKey(ctx.owner.token, 'shared-key-1');
    expect(first.status, first.text).toBe(201);
    const second = await createKey(ctx.admin.token, 'shared-key-1');
    expect(second.status, second.text).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.key).not.toBe(first.body.key);
    expect(second.body.created_by).toBe(ctx.admin.user.id);
    expect(second.text.includes(first.body.key as string)).toBe(false);
    const listed = await ctx.server.request('GET', '/api-keys', { token: ctx.owner.token });
    expect(listed.body.items.filter((item: { name: string }) => item.name === 'deploy bot')).toHaveLength(2);
  });

  it('the same member retrying gets the same response, marked as a replay', async () => {
    const first = await createKey(ctx.admin.token, 'retry-key');
    const again = await createKey(ctx.admin.token, 'retry-key');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // the owner using that key afterwards is not the admin's retry
    const owners = await createKey(ctx.owner.token, 'retry-key');
    expect(owners.status).toBe(201);
    expect(owners.body.id).not.toBe(first.body.id);
  });

  it('a reused key with another body is refused only for its own caller', async () => {
    expect((await createKey(ctx.owner.token, 'body-key')).status).toBe(201);
    const reused = await createKey(ctx.owner.token, 'body-key', { name: 'other', permissions: ['realm:read'] });
    expectError(reused, 409, 'idempotency_key_reused');
    // another member is not bound by the owner's body
    expect((await createKey(ctx.admin.token, 'body-key', { name: 'other', permissions: ['realm:read'] })).status).toBe(201);
  });

  it('an API key is its own principal, apart from the user who created it', async () => {
    const made = await createKey(ctx.owner.token, 'principal-key-setup', { name: 'maker', permissions: ['api_key:manage', 'realm:read'] });
    expect(made.status).toBe(201);
    const apiKey = made.body.key as string;
    const byUser = await createKey(ctx.owner.token, 'principal-key');
    const byKey = await createKey(apiKey, 'principal-key');
    expect(byKey.status, byKey.text).toBe(201);
    expect(byKey.body.id).not.toBe(byUser.body.id);
    expect(byKey.headers.get('idempotent-replayed')).toBeNull();
    const keyAgain = await createKey(apiKey, 'principal-key');
    expect(keyAgain.body.id).toBe(byKey.body.id);
    expect(keyAgain.headers.get('idempotent-replayed')).toBe('true');
  });

  it('other resources follow the same rule (realms), and other organizations never share', async () => {
    const a = await ctx.server.request('POST', '/realms', { token: ctx.owner.token, body: { name: 'idem-a' }, headers: { 'idempotency-key': 'realm-key' } });
    expect(a.status).toBe(201);
    const b = await ctx.server.request('POST', '/realms', { token: ctx.admin.token, body: { name: 'idem-a' }, headers: { 'idempotency-key': 'realm-key' } });
    // a fresh create: the unique name answers, not a replay of the owner's realm
    expectError(b, 409, 'conflict');
    const other = await ctx.server.register('Other Idempotency Org');
    const c = await ctx.server.request('POST', '/realms', { token: other.token, body: { name: 'idem-a' }, headers: { 'idempotency-key': 'realm-key' } });
    expect(c.status).toBe(201);
    expect(c.body.id).not.toBe(a.body.id);
  });
});
