/** /gateways as a resource: CRUD, validation, the api_key sealed and masked, the endpoint rule, one default, isolation, egress. */
import { describe, expect, it } from 'vitest';
import { useSuite, useTwoOrgs } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { oneOrg } from '../helpers/orgs.js';
import { startFakeTemporal } from '../fakes/temporal/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const KEY = 'temporal-cloud-api-key-0042';
const TEMPORAL_CONTEXT = { namespace: 'default', task_queue: 'agents', workflow_type: 'RunStep' };
/** the body of a temporal gateway named `name` on TEMPORAL_CONTEXT */
const temporalGateway = (name: string, fields: Record<string, unknown>) => ({ name, engine_type: 'temporal', context: TEMPORAL_CONTEXT, ...fields });

describe('gateways: the resource', () => {
  const ctx = useTwoOrgs();

  const create = (token: string, body: Record<string, unknown>) => ctx.server.request('POST', '/gateways', { token, body });

  it('creates, reads, lists, changes and deletes a gateway; the api_key is sealed at rest and masked on every read', async () => {
    const { server, alice } = ctx;
    const created = await create(alice.token, temporalGateway('prod-temporal', { base_url: 'https://temporal.example.com:7243', api_key: KEY }));
    expectStatus(created, 201).toMatchObject({
      name: 'prod-temporal',
      engine_type: 'temporal',
      base_url: 'https://temporal.example.com:7243',
      api_key: '****0042',
      is_default: false,
      context: TEMPORAL_CONTEXT,
      last_health_status: 'unknown',
      last_health_at: null,
      last_health_error: null,
      created_by: alice.user.id,
    });
    expect(created.text).not.toContain(KEY);
    const stored = await server.service.services.collections.gateways.get(alice.organization.id as never, created.body.id);
    expect(JSON.stringify(stored)).not.toContain(KEY);

    const read = await server.request('GET', `/gateways/${created.body.id}`, { token: alice.token });
    expect(read.body.api_key).toBe('****0042');
    const list = await server.request('GET', '/gateways', { token: alice.token });
    expect(list.body).toMatchObject({ total: 1, next_cursor: null });
    expect(list.text).not.toContain(KEY);

    const renamed = await server.request('PATCH', `/gateways/${created.body.id}`, {
      token: alice.token,
      body: { name: 'temporal-main', context: { ...TEMPORAL_CONTEXT, task_queue: 'agents-v2' } },
    });
    expectStatus(renamed, 200).toMatchObject({ name: 'temporal-main', api_key: '****0042', context: { task_queue: 'agents-v2' } });

    const removed = await server.request('PATCH', `/gateways/${created.body.id}`, { token: alice.token, body: { api_key: null } });
    expect(removed.body.api_key).toBeNull();

    expect((await server.request('DELETE', `/gateways/${created.body.id}`, { token: alice.token })).status).toBe(204);
    expect((await server.request('GET', `/gateways/${created.body.id}`, { token: alice.token })).status).toBe(404);
  });

  it('validates: engine type, URL, context size and depth, temporal target, webhook key; names unique (409); engine_type immutable', async () => {
    const { server, alice } = ctx;
    const base = temporalGateway('v', { base_url: 'https://t.example.com' });
    const bad = [
      { ...base, engine_type: 'argo' },
      { ...base, base_url: 'ftp://t.example.com' },
      { ...base, base_url: 'not a url' },
      { ...base, name: 'default' },
      { ...base, context: { ...TEMPORAL_CONTEXT, blob: 'x'.repeat(17_000) } },
      { ...base, context: { ...TEMPORAL_CONTEXT, deep: { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } } } },
      { ...base, context: { namespace: 'default' } },
      { ...base, engine_type: 'webhook', context: {} },
      { ...base, engine_type: 'webhook', api_key: 'short', context: {} },
      { ...base, extra: true },
    ];
    for (const body of bad) {
      const answer = await create(alice.token, body);
      expect(answer.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(answer.body.error.code).toBe('validation_error');
    }
    const missing = await create(alice.token, { ...base, context: { namespace: 'default' } });
    expect(missing.body.error.details.issues.map((issue: any) => issue.path)).toEqual(['context.task_queue', 'context.workflow_type']);

    const first = await create(alice.token, { ...base, name: 'unique-one' });
    expect(first.status).toBe(201);
    const again = await create(alice.token, { ...base, name: 'unique-one' });
    expectError(again, 409, 'conflict');

    const immutable = await server.request('PATCH', `/gateways/${first.body.id}`, { token: alice.token, body: { engine_type: 'webhook' } });
    expectError(immutable, 400, 'immutable_field');
    const same = await server.request('PATCH', `/gateways/${first.body.id}`, { token: alice.token, body: { engine_type: 'temporal' } });
    expect(same.status).toBe(200);
  });

  it('a new base_url needs the api_key again (400 naming it); giving it moves both', async () => {
    const { server, alice } = ctx;
    const created = await create(alice.token, {
      name: 'moving',
      engine_type: 'webhook',
      base_url: 'https://hooks.example.com/a',
      api_key: 'webhook-signing-secret-aaaa',
    });
    const moved = await server.request('PATCH', `/gateways/${created.body.id}`, { token: alice.token, body: { base_url: 'https://evil.example.net/b' } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'api_key' }], missing_secrets: ['api_key'] } });
    // the same URL again is no move
    const unchanged = await server.request('PATCH', `/gateways/${created.body.id}`, { token: alice.token, body: { base_url: 'https://hooks.example.com/a' } });
    expect(unchanged.status).toBe(200);
    const both = await server.request('PATCH', `/gateways/${created.body.id}`, {
      token: alice.token,
      body: { base_url: 'https://hooks.example.com/b', api_key: 'webhook-signing-secret-bbbb' },
    });
    expectStatus(both, 200).toMatchObject({ base_url: 'https://hooks.example.com/b', api_key: '****bbbb', last_health_status: 'unknown' });
  });

  it('keeps at most one default per organization: setting one clears the other', async () => {
    const { server, bob } = ctx;
    const body = (name: string, isDefault: boolean) => temporalGateway(name, { base_url: 'https://t.example.com', is_default: isDefault });
    const one = await create(bob.token, body('one', true));
    expect(one.body.is_default).toBe(true);
    const two = await create(bob.token, body('two', true));
    expect(two.body.is_default).toBe(true);
    expect((await server.request('GET', `/gateways/${one.body.id}`, { token: bob.token })).body.is_default).toBe(false);
    const back = await server.request('PATCH', `/gateways/${one.body.id}`, { token: bob.token, body: { is_default: true } });
    expect(back.body.is_default).toBe(true);
    const list = await server.request('GET', '/gateways', { token: bob.token });
    expect(list.body.items.filter((item: any) => item.is_default).map((item: any) => item.name)).toEqual(['one']);
    // the dispatch port resolves `default` and null to it
    const resolved = await server.service.services.gateways.resolve(bob.organization.id as never, null);
    expect(resolved.id).toBe(one.body.id);
  });

  it("answers 404 for another organization's gateway on every route", async () => {
    const { server, alice, bob } = ctx;
    const created = await create(alice.token, temporalGateway('alice-only', { base_url: 'https://t.example.com' }));
    const id = created.body.id as string;
    for (const [method, path, body] of [
      ['GET', `/gateways/${id}`, undefined],
      ['PATCH', `/gateways/${id}`, { name: 'taken' }],
      ['DELETE', `/gateways/${id}`, undefined],
      ['POST', `/gateways/${id}/test`, undefined],
      ['GET', `/gateways/${id}/dispatches`, undefined],
    ] as const) {
      const answer = await server.request(method, path, { token: bob.token, ...(body ? { body } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    const list = await server.request('GET', '/gateways', { token: bob.token });
    expect(list.body.items.map((item: any) => item.id)).not.toContain(id);
    await expect(
      server.service.services.gatewayDispatcher.dispatch(bob.organization.id, id, { workflow_run_id: 'r', step_id: 's', input: {} }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('members read gateways but do not manage them', async () => {
    const { server, alice } = ctx;
    const member = await addMember(server, alice, 'member');
    expect((await server.request('GET', '/gateways', { token: member.token })).status).toBe(200);
    const refused = await create(member.token, temporalGateway('nope', { base_url: 'https://t.example.com' }));
    expect(refused.status).toBe(403);
  });
});

describe('gateways: egress guard', () => {
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal());
    return { temporal, ...own(await oneOrg({ EGRESS_ALLOW: '' }), (it) => it.server.stop()) };
  });

  it('refuses a loopback base_url at save (422) and a name resolving to loopback when probed', async () => {
    const { server, owner, temporal } = ctx;
    const literal = await server.request('POST', '/gateways', {
      token: owner.token,
      body: temporalGateway('loop', { base_url: temporal.url }),
    });
    expectError(literal, 422, 'egress_refused');

    const named = await server.request('POST', '/gateways', {
      token: owner.token,
      body: temporalGateway('named', { base_url: temporal.url.replace('127.0.0.1', 'localhost') }),
    });
    expect(named.status).toBe(201);
    const probed = await server.request('POST', `/gateways/${named.body.id}/test`, { token: owner.token });
    expect(probed.body.last_health_status).toBe('down');
    expect(probed.body.last_health_error).toMatch(/^egress_refused/);
    expect(temporal.requests).toEqual([]);
  });
});
