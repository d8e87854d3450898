import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

interface Agent {
  id: string;
  name: string;
  agent_type: string;
  enabled: boolean;
}

describe('agents', () => {
  const ctx = useTwoOrgs();

  const create = (session: Session, body: Record<string, unknown>) => ctx.server.request('POST', '/agents', { token: session.token, body });

  it('publishes the agent-type catalog with a JSON schema per type', async () => {
    const response = await ctx.server.request('GET', '/agents/types', { token: ctx.alice.token });
    expect(response.status).toBe(200);
    const types = response.body.items as { agent_type: string; description: string; config_schema: any }[];
    expect(types.map((type) => type.agent_type)).toEqual(['assistant', 'sre', 'code_reviewer', 'summarizer']);
    for (const type of types) {
      expect(type.description.length, type.agent_type).toBeGreaterThan(10);
      expect(type.config_schema.type).toBe('object');
      expect(type.config_schema.additionalProperties).toBe(false);
      expect(type.config_schema.properties.max_turns).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
      expect(type.config_schema.properties.temperature).toMatchObject({ type: 'number', minimum: 0, maximum: 2 });
      expect(type.config_schema.properties.system_prompt.type).toBe('string');
      expect(type.config_schema.properties.model.type).toBe('string');
    }
    const reviewer = types.find((type) => type.agent_type === 'code_reviewer');
    expect(reviewer?.config_schema.properties.focus.items.enum).toEqual(['correctness', 'security', 'performance', 'style', 'tests']);
  });

  it('starts every organization with the default assistant agent', async () => {
    const list = await ctx.server.request('GET', '/agents', { token: ctx.alice.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.items[0]).toMatchObject({ name: 'default', agent_type: 'assistant', config: {}, enabled: true });
    expect((await ctx.server.request('GET', '/agents/default', { token: ctx.alice.token })).body.id).toBe(list.body.items[0].id);
  });

  it('creates, reads, updates and deletes an agent', async () => {
    const created = await create(ctx.alice, {
      agent_type: 'sre',
      name: 'Ops bot',
      config: { read_only: true, max_turns: 12, temperature: 0, escalation_channel: '#ops' },
    });
    expectStatus(created, 201).toMatchObject({
      agent_type: 'sre',
      name: 'Ops bot',
      config: { read_only: true, max_turns: 12, temperature: 0, escalation_channel: '#ops' },
      enabled: true,
    });
    expect(created.body.id).toMatch(/^agt_/);
    const id = created.body.id as string;

    expect((await ctx.server.request('GET', `/agents/${id}`, { token: ctx.alice.token })).body.name).toBe('Ops bot');
    expect((await ctx.server.request('GET', `/agents/${encodeURIComponent('Ops bot')}`, { token: ctx.alice.token })).body.id).toBe(id);

    const patched = await ctx.server.request('PATCH', `/agents/${id}`, {
      token: ctx.alice.token,
      body: { enabled: false, config: { max_turns: 3 } },
    });
    expect(patched.status).toBe(200);
    // config is replaced whole, not merged
    expect(patched.body).toMatchObject({ enabled: false, config: { max_turns: 3 }, name: 'Ops bot' });

    expect((await ctx.server.request('DELETE', `/agents/${id}`, { token: ctx.alice.token })).status).toBe(204);
    const gone = await ctx.server.request('GET', `/agents/${id}`, { token: ctx.alice.token });
    expectError(gone, 404, 'not_found');
  });

  it('defaults config to {} and enabled to true', async () => {
    const created = await create(ctx.alice, { agent_type: 'summarizer', name: 'plain' });
    expectStatus(created, 201).toMatchObject({ config: {}, enabled: true });
  });

  it('rejects an agent_type outside the catalog and a missing name or type', async () => {
    const unknownType = await create(ctx.alice, { agent_type: 'wizard', name: 'w' });
    expectError(unknownType, 400, 'validation_error');
    expect(unknownType.body.error.details.issues[0].path).toBe('agent_type');

    for (const body of [{ name: 'no type' }, { agent_type: 'assistant' }, { agent_type: 'assistant', name: '  ' }]) {
      const response = await create(ctx.alice, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    const extra = await create(ctx.alice, { agent_type: 'assistant', name: 'x', colour: 'red' });
    expect(extra.status).toBe(400);
  });

  it("validates config against the type's schema, naming the path", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['assistant', { max_turns: 0 }, 'config.max_turns'],
      ['assistant', { temperature: 3 }, 'config.temperature'],
      ['sre', { read_only: 'yes' }, 'config.read_only'],
      ['assistant', { memory_realms: ['default', 7] }, 'config.memory_realms.1'],
      // removed from the catalog (no run could honour them): unknown keys like any other
      ['sre', { realms: ['default'] }, 'config.realms'],
      ['code_reviewer', { approve_when_clean: true }, 'config.approve_when_clean'],
      ['code_reviewer', { max_comments: 5 }, 'config.max_comments'],
      ['code_reviewer', { focus: ['vibes'] }, 'config.focus.0'],
      ['summarizer', { format: 'haiku' }, 'config.format'],
      // a key of another type is not a setting of this one
      ['summarizer', { read_only: true }, 'config.read_only'],
    ];
    for (const [agent_type, config, path] of cases) {
      const response = await create(ctx.alice, { agent_type, name: `bad-${path}`, config });
      expect(response.status, `${agent_type} ${JSON.stringify(config)}`).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.issues[0].path).toBe(path);
      expect(response.body.error.message).toContain(path);
    }
    const notObject = await create(ctx.alice, { agent_type: 'assistant', name: 'arr', config: [1] });
    expect(notObject.status).toBe(400);
    expect(notObject.body.error.details.issues[0].path).toBe('config');

    const created = await create(ctx.alice, { agent_type: 'code_reviewer', name: 'reviewer', config: { focus: ['security'] } });
    expect(created.status).toBe(201);
    const badPatch = await ctx.server.request('PATCH', `/agents/${created.body.id}`, {
      token: ctx.alice.token,
      body: { config: { max_comments: 1000 } },
    });
    expect(badPatch.status).toBe(400);
    expect(badPatch.body.error.details.issues[0].path).toBe('config.max_comments');
    expect((await ctx.server.request('GET', `/agents/${created.body.id}`, { token: ctx.alice.token })).body.config).toEqual({ focus: ['security'] });
  });

  it('keeps agent_type immutable', async () => {
    const created = await create(ctx.alice, { agent_type: 'assistant', name: 'fixed-type' });
    const changed = await ctx.server.request('PATCH', `/agents/${created.body.id}`, { token: ctx.alice.token, body: { agent_type: 'sre' } });
    expect(changed.status).toBe(400);
    expect(changed.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'agent_type' } });
    const same = await ctx.server.request('PATCH', `/agents/${created.body.id}`, {
      token: ctx.alice.token,
      body: { agent_type: 'assistant', name: 'fixed-type-2' },
    });
    expect(same.status).toBe(200);
    expect(same.body.name).toBe('fixed-type-2');
  });

  it('keeps names unique per organization (409)', async () => {
    expect((await create(ctx.alice, { agent_type: 'assistant', name: 'twin' })).status).toBe(201);
    const duplicate = await create(ctx.alice, { agent_type: 'sre', name: 'twin' });
    expectError(duplicate, 409, 'conflict');

    const other = await create(ctx.alice, { agent_type: 'assistant', name: 'twin-2' });
    const renamed = await ctx.server.request('PATCH', `/agents/${other.body.id}`, { token: ctx.alice.token, body: { name: 'twin' } });
    expectError(renamed, 409, 'conflict');

    expect((await create(ctx.bob, { agent_type: 'assistant', name: 'twin' })).status).toBe(201);
  });

  it('refuses to delete or rename the default agent (409)', async () => {
    const agent = (await ctx.server.request('GET', '/agents/default', { token: ctx.alice.token })).body as Agent;
    const refused = await ctx.server.request('DELETE', `/agents/${agent.id}`, { token: ctx.alice.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { agent: 'default' } });
    const rename = await ctx.server.request('PATCH', `/agents/${agent.id}`, { token: ctx.alice.token, body: { name: 'primary' } });
    expectError(rename, 409, 'conflict');
    expect((await ctx.server.request('GET', `/agents/${agent.id}`, { token: ctx.alice.token })).body.name).toBe('default');
  });

  it('filters by enabled and agent_type and paginates', async () => {
    const carol = await ctx.server.register('Carol Co');
    await create(carol, { agent_type: 'sre', name: 'sre-on' });
    await create(carol, { agent_type: 'sre', name: 'sre-off', enabled: false });
    await create(carol, { agent_type: 'summarizer', name: 'sum-off', enabled: false });

    const names = async (query: string) =>
      ((await ctx.server.request('GET', `/agents${query}`, { token: carol.token })).body.items as Agent[]).map((agent) => agent.name);
    expect(await names('')).toEqual(['default', 'sre-on', 'sre-off', 'sum-off']);
    expect(await names('?enabled=false')).toEqual(['sre-off', 'sum-off']);
    expect(await names('?enabled=true')).toEqual(['default', 'sre-on']);
    expect(await names('?agent_type=sre')).toEqual(['sre-on', 'sre-off']);
    expect(await names('?agent_type=sre&enabled=false')).toEqual(['sre-off']);

    const first = await ctx.server.request('GET', '/agents?limit=3', { token: carol.token });
    expect(first.body.total).toBe(4);
    expect(first.body.items).toHaveLength(3);
    const second = await ctx.server.request('GET', `/agents?limit=3&cursor=${first.body.next_cursor}`, { token: carol.token });
    expect((second.body.items as Agent[]).map((agent) => agent.name)).toEqual(['sum-off']);
    expect(second.body.next_cursor).toBeNull();

    for (const query of ['?enabled=yes', '?agent_type=wizard']) {
      const bad = await ctx.server.request('GET', `/agents${query}`, { token: carol.token });
      expectError(bad, 400, 'validation_error');
    }
  });

  it("answers 404 for another organization's agent, on every verb", async () => {
    const created = await create(ctx.bob, { agent_type: 'assistant', name: 'bobs-agent' });
    const id = created.body.id as string;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { enabled: false }],
      ['DELETE', undefined],
    ] as const) {
      const response = await ctx.server.request(method, `/agents/${id}`, { token: ctx.alice.token, body });
      expectError(response, 404, 'not_found');
    }
    expect((await ctx.server.request('GET', '/agents/bobs-agent', { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/agents/${id}`, { token: ctx.bob.token })).body.enabled).toBe(true);
  });
});
