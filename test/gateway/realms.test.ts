import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('realms', () => {
  const ctx = useTwoOrgs();

  it('starts every organization with the default realm', async () => {
    const list = await ctx.server.request('GET', '/realms', { token: ctx.alice.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items.map((realm: { name: string }) => realm.name)).toEqual(['default']);
    expect(list.body.next_cursor).toBeNull();
  });

  it('creates, reads, updates and deletes a realm', async () => {
    const created = await ctx.server.request('POST', '/realms', {
      token: ctx.alice.token,
      body: { name: 'prod-eu_1', display_name: 'Prod EU', color: '#1f6feb' },
    });
    expectStatus(created, 201).toMatchObject({ name: 'prod-eu_1', display_name: 'Prod EU', color: '#1f6feb', description: null });
    const id = created.body.id as string;

    expect((await ctx.server.request('GET', `/realms/${id}`, { token: ctx.alice.token })).body.name).toBe('prod-eu_1');
    expect((await ctx.server.request('GET', '/realms/prod-eu_1', { token: ctx.alice.token })).body.id).toBe(id);

    const patched = await ctx.server.request('PATCH', `/realms/${id}`, { token: ctx.alice.token, body: { description: 'EU production' } });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('EU production');

    expect((await ctx.server.request('DELETE', `/realms/${id}`, { token: ctx.alice.token })).status).toBe(204);
    expect((await ctx.server.request('GET', `/realms/${id}`, { token: ctx.alice.token })).status).toBe(404);
  });

  it('shows every write in the next list (no stale page)', async () => {
    const session = await ctx.server.register();
    const names = async () =>
      (await ctx.server.request('GET', '/realms', { token: session.token })).body.items.map(
        (realm: { name: string; color: string | null }) => `${realm.name}:${realm.color}`,
      );
    expect(await names()).toEqual(['default:null']);
    const created = await ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'fresh' } });
    expect(await names()).toEqual(['default:null', 'fresh:null']);
    await ctx.server.request('PATCH', `/realms/${created.body.id}`, { token: session.token, body: { color: '#abc' } });
    expect(await names()).toEqual(['default:null', 'fresh:#abc']);
    await ctx.server.request('DELETE', `/realms/${created.body.id}`, { token: session.token });
    expect(await names()).toEqual(['default:null']);
    // trailing slash and a lowercase scheme reach the same route
    const slash = await ctx.server.request('GET', '/realms/', { headers: { authorization: `bearer ${session.token}` } });
    expect(slash.status).toBe(200);
    expect(slash.body.total).toBe(1);
  });

  it('rejects bad names with 400 and duplicates with 409', async () => {
    for (const name of ['Upper', 'has space', 'a'.repeat(101), '', 'dot.ted']) {
      const response = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name } });
      expectError(response, 400, 'validation_error');
    }
    expect((await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'a'.repeat(100) } })).status).toBe(201);
    await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'dup' } });
    const again = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'dup' } });
    expectError(again, 409, 'conflict');
    // the same name in another organization is fine
    expect((await ctx.server.request('POST', '/realms', { token: ctx.bob.token, body: { name: 'dup' } })).status).toBe(201);
  });

  it('rejects a bad colour and unknown fields', async () => {
    expect((await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'c1', color: 'red' } })).status).toBe(400);
    const unknown = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'c2', colour: '#fff' } });
    expectError(unknown, 400, 'validation_error');
  });

  it('keeps the name immutable', async () => {
    const created = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'fixed' } });
    const renamed = await ctx.server.request('PATCH', `/realms/${created.body.id}`, { token: ctx.alice.token, body: { name: 'other' } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'name' } });
    const same = await ctx.server.request('PATCH', `/realms/${created.body.id}`, { token: ctx.alice.token, body: { name: 'fixed', color: '#000' } });
    expect(same.status).toBe(200);
  });

  it('refuses to delete the default realm', async () => {
    const list = await ctx.server.request('GET', '/realms', { token: ctx.alice.token });
    const defaultRealm = list.body.items.find((realm: { name: string }) => realm.name === 'default');
    const response = await ctx.server.request('DELETE', `/realms/${defaultRealm.id}`, { token: ctx.alice.token });
    expect(response.status).toBe(409);
    expect((await ctx.server.request('GET', `/realms/${defaultRealm.id}`, { token: ctx.alice.token })).status).toBe(200);
  });

  it('refuses to delete a realm that still holds memory entries', async () => {
    const created = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'busy' } });
    const memory = await ctx.server.request('POST', '/memory', { token: ctx.alice.token, body: { realm: 'busy', text: 'kept here' } });
    expect(memory.status).toBe(201);
    const refused = await ctx.server.request('DELETE', `/realms/${created.body.id}`, { token: ctx.alice.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toEqual({ realm: 'busy', memory_entries: 1 });
    await ctx.server.request('DELETE', `/memory/${memory.body.id}`, { token: ctx.alice.token });
    expect((await ctx.server.request('DELETE', `/realms/${created.body.id}`, { token: ctx.alice.token })).status).toBe(204);
  });

  it("answers 404 for another organization's realm, on every verb", async () => {
    const created = await ctx.server.request('POST', '/realms', { token: ctx.bob.token, body: { name: 'bobs' } });
    const id = created.body.id as string;
    expect((await ctx.server.request('GET', `/realms/${id}`, { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('GET', '/realms/bobs', { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('PATCH', `/realms/${id}`, { token: ctx.alice.token, body: { color: '#fff' } })).status).toBe(404);
    expect((await ctx.server.request('DELETE', `/realms/${id}`, { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/realms/${id}`, { token: ctx.bob.token })).status).toBe(200);
  });
});
