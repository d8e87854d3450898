/** /platform/users: every user of the service with their organizations, for the operators PLATFORM_OPERATORS names. */
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { startTestServer, type Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const OPERATOR_EMAIL = 'ops@example.test';
const PASSWORD = 'correct horse battery staple';

describe('/platform/users', () => {
  const ctx = useSuite(async (own) => {
    // the listed spelling differs in case and spacing from the registered one: compared as identity stores emails
    const server = own(await startTestServer({ PLATFORM_OPERATORS: ' Ops@Example.test , other-ops@example.test' }));
    const registered = await server.request('POST', '/auth/register', {
      body: { email: OPERATOR_EMAIL, password: PASSWORD, organization_name: 'Operations' },
    });
    expect(registered.status).toBe(201);
    const operator: Session = { ...registered.body, email: OPERATOR_EMAIL, password: PASSWORD };
    const alice = await server.register('Alice Inc');
    const bob = await server.register('Bob Inc');
    // bob joins Alice Inc as a viewer too
    const invite = await server.request('POST', '/platform/invites', { token: alice.token, body: { email: bob.email, role: 'viewer' } });
    expect(invite.status).toBe(201);
    const accepted = await server.request('POST', '/auth/invites/accept', { body: { token: invite.body.token, password: bob.password } });
    expect(accepted.status).toBe(201);
    return { server, operator, alice, bob };
  });

  const get = (path: string, token: string) => ctx.server.request('GET', path, { token });

  it('lists every user, oldest first, with organizations and roles', async () => {
    const list = await get('/platform/users', ctx.operator.token);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(3);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.items.map((user: any) => user.email)).toEqual([OPERATOR_EMAIL, ctx.alice.email, ctx.bob.email]);
    const bobListed = list.body.items[2];
    expect(bobListed).toEqual({
      id: ctx.bob.user.id,
      email: ctx.bob.email,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      organizations: [
        { id: ctx.alice.organization.id, name: 'Alice Inc', role: 'viewer', joined_at: expect.any(String) },
        { id: ctx.bob.organization.id, name: 'Bob Inc', role: 'owner', joined_at: expect.any(String) },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    });
    // never a password hash
    expect(list.text.includes('password')).toBe(false);
  });

  it('pages with the shared cursor', async () => {
    const first = await get('/platform/users?limit=2', ctx.operator.token);
    expect(first.body.items.map((user: any) => user.email)).toEqual([OPERATOR_EMAIL, ctx.alice.email]);
    expect(first.body.total).toBe(3);
    const second = await get(`/platform/users?limit=2&cursor=${first.body.next_cursor}`, ctx.operator.token);
    expect(second.body.items.map((user: any) => user.email)).toEqual([ctx.bob.email]);
    expect(second.body.next_cursor).toBeNull();
    expect((await get('/platform/users?cursor=forged', ctx.operator.token)).body.error.code).toBe('invalid_cursor');
    expect((await get('/platform/users?limit=201', ctx.operator.token)).status).toBe(400);
  });

  it('shows one user; an unknown id is 404', async () => {
    const one = await get(`/platform/users/${ctx.alice.user.id}`, ctx.operator.token);
    expectStatus(one, 200).toMatchObject({
      id: ctx.alice.user.id,
      email: ctx.alice.email,
      organizations: [{ id: ctx.alice.organization.id, name: 'Alice Inc', role: 'owner' }],
    });
    const missing = await get('/platform/users/usr_nope', ctx.operator.token);
    expectError(missing, 404, 'not_found');
  });

  it("is 403 for everyone else: owners of other organizations, members, API keys (even the operator's), and 401 without credentials", async () => {
    for (const token of [ctx.alice.token, ctx.bob.token]) {
      for (const path of ['/platform/users', `/platform/users/${ctx.alice.user.id}`, '/platform/users/usr_nope']) {
        const denied = await get(path, token);
        expectError(denied, 403, 'forbidden');
      }
    }
    const key = await ctx.server.request('POST', '/api-keys', { token: ctx.operator.token, body: { name: 'ops key', permissions: ['user:read'] } });
    expect(key.status).toBe(201);
    expect((await get('/platform/users', key.body.key)).status).toBe(403);
    expect((await ctx.server.request('GET', '/platform/users')).status).toBe(401);
  });

  it('nobody is an operator without PLATFORM_OPERATORS', async () => {
    const plain = await startTestServer();
    try {
      const first = await plain.register('First');
      const denied = await plain.request('GET', '/platform/users', { token: first.token });
      expectError(denied, 403, 'forbidden');
    } finally {
      await plain.stop();
    }
  });

  it('PLATFORM_OPERATORS refuses an entry that is not an email at start', () => {
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), PLATFORM_OPERATORS: 'ops@example.test,not-an-email' })).toThrow(ConfigError);
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), PLATFORM_OPERATORS: 'not-an-email' })).toThrow(/PLATFORM_OPERATORS/);
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), PLATFORM_OPERATORS: 'A@Example.test, a@example.test,' }).platformOperators).toEqual(['a@example.test']);
  });

  it('documents both routes in /openapi.json', async () => {
    const paths = (await ctx.server.request('GET', '/openapi.json')).body.paths;
    const item = paths['/api/v1/platform/users'].get.responses['200'].content['application/json'].schema.properties.items.items;
    expect(Object.keys(item.properties).sort()).toEqual(['created_at', 'email', 'id', 'organizations', 'updated_at']);
    expect(paths['/api/v1/platform/users/{id}'].get).toBeDefined();
  });
});
