/**
 * aws sources through the service: created with /sources against the fake
 * AWS (secrets sealed and masked), validated, synced into the real graph
 * store, used by a chat run whose write waits for approval, invisible to
 * another organization, and refused by the egress guard when the endpoint
 * is not open.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { startWiredOrg } from '../helpers/llm.js';
import { createSource } from '../sources/helpers.js';
import { startFakeAws, type FakeAws } from '../fakes/aws/server.js';
import { GOOD_KEY, sampleAccount } from '../fakes/aws/state.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { decide, execute, send, wireOrganization } from '../runtime/chat-helpers.js';

const configFor = (fake: FakeAws, overrides: Record<string, unknown> = {}) => ({
  regions: ['us-east-1'],
  access_key_id: GOOD_KEY.id,
  secret_access_key: GOOD_KEY.secret,
  endpoint: fake.url,
  ...overrides,
});

describe('aws source through the service', () => {
  const ctx = useSuite(async (own) => {
    const fake = own(await startFakeAws(sampleAccount()));
    const started = ownLlm(own, await startWiredOrg({}, { approvalWrite: 'ask' }));
    return {
      ...started,
      fake,
      sourceId: await createSource(started.server, started.org.session.token, { name: 'AWS prod', connector: 'aws', config: configFor(fake) }),
    };
  });

  const syncToEnd = async (id: string, token: string): Promise<any> => {
    const started = await ctx.server.request('POST', `/sources/${id}/sync`, { token });
    expect(started.status, started.text).toBe(202);
    let job = started.body;
    while (job.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      job = (await ctx.server.request('GET', `/sources/${id}/jobs/${started.body.id}`, { token })).body;
    }
    return job;
  };

  it('is in the catalog with its config schema and tools; secrets are masked on read and sealed at rest', async () => {
    const catalog = await ctx.server.request('GET', '/sources/catalog', { token: ctx.org.session.token });
    const aws = catalog.body.items.find((item: { kind: string }) => item.kind === 'aws');
    expect(aws).toMatchObject({ supports_sync: true, config_schema: { required: ['regions', 'access_key_id', 'secret_access_key'] } });
    expect(
      aws.tools
        .filter((t: { effect: string }) => t.effect === 'write')
        .map((t: { name: string }) => t.name)
        .sort(),
    ).toEqual(['aws.reboot_instance', 'aws.scale_ecs_service', 'aws.set_alarm_state']);

    const masked = await ctx.server.request('POST', '/sources', {
      token: ctx.org.session.token,
      body: { name: 'AWS masked', connector: 'aws', config: configFor(ctx.fake, { session_token: 'session-token-kept-secret' }) },
    });
    expect(masked.body.config).toMatchObject({ access_key_id: GOOD_KEY.id, secret_access_key: '********', session_token: '********' });
    const read = await ctx.server.request('GET', `/sources/${ctx.sourceId}`, { token: ctx.org.session.token });
    expect(read.body.config).toMatchObject({ regions: ['us-east-1'], access_key_id: GOOD_KEY.id, secret_access_key: '********', endpoint: ctx.fake.url });
    expect(read.text).not.toContain(GOOD_KEY.secret);
    for (const file of readdirSync(ctx.server.dataDir).filter((name) => name.startsWith('metadata'))) {
      const stored = readFileSync(join(ctx.server.dataDir, file));
      expect(stored.includes(GOOD_KEY.secret)).toBe(false);
      expect(stored.includes('session-token-kept-secret')).toBe(false);
    }
    await ctx.server.request('DELETE', `/sources/${masked.body.id}`, { token: ctx.org.session.token });
  });

  it('validates with STS: good keys pass, a wrong secret is 422 source_validation_failed', async () => {
    const ok = await ctx.server.request('GET', `/sources/${ctx.sourceId}/test`, { token: ctx.org.session.token });
    expect(ok.status, ok.text).toBe(200);
    const bad = await ctx.server.request('POST', '/sources', {
      token: ctx.org.session.token,
      body: { name: 'AWS wrong secret', connector: 'aws', config: configFor(ctx.fake, { secret_access_key: 'wrong-secret' }) },
    });
    const refused = await ctx.server.request('GET', `/sources/${bad.body.id}/test`, { token: ctx.org.session.token });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'unauthorized', aws_code: 'SignatureDoesNotMatch' } });
    expect(refused.text).not.toContain('wrong-secret');
    await ctx.server.request('DELETE', `/sources/${bad.body.id}`, { token: ctx.org.session.token });
  });

  it('syncs instances, ECS services, functions and alarms into the graph, linked to their services', async () => {
    expect(await syncToEnd(ctx.sourceId, ctx.org.session.token)).toMatchObject({
      status: 'succeeded',
      details: { instances: 3, ecs_services: 2, lambda_functions: 2, alarms: 3 },
    });
    const instance = `Instance:arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60001`;
    const node = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(instance)}`, { token: ctx.org.session.token });
    if (node.status === 503) {
      console.warn('graph store not available: the graph half of the sync test is skipped');
      return;
    }
    expect(node.status, node.text).toBe(200);
    expect(JSON.stringify(node.body)).toContain('checkout-1');
    const around = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(instance)}/expand`, { token: ctx.org.session.token });
    expect(around.status, around.text).toBe(200);
    expect((around.body.relationships as { type: string }[]).map((r) => r.type).sort()).toEqual(['MONITORS', 'RUNS']);
    expect(JSON.stringify(around.body.nodes)).toContain('checkout-1-cpu-high');

    const other = await ctx.server.register();
    expect((await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(instance)}`, { token: other.token })).status).toBe(404);
  });

  it('a chat run reads the firing alarms and, once approved, reboots the instance', async () => {
    ctx.llm.script([
      { tool_calls: [{ id: 'a1', ...execute('aws.alarms_in_alarm', {}) }] },
      { tool_calls: [{ id: 'a2', ...execute('aws.reboot_instance', { instance_id: 'i-0a1b2c3d4e5f60001' }) }] },
      { text: 'checkout-1 was pegged at 97% CPU; I rebooted it.' },
    ]);
    const stream = await send(ctx.server, ctx.org, 'what is firing in AWS? fix the hung checkout box');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('aws.reboot_instance');
    expect(ctx.fake.effects).toEqual([]);
    const decision = await decide(ctx.server, ctx.org, required.data.approval_id);
    expect(decision.status, decision.text).toBe(200);
    await stream.ended;
    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => event.data.result);
    expect(results[0].result.items.map((a: { name: string }) => a.name)).toEqual(['checkout-1-cpu-high', 'orders-api-running-low']);
    expect(results[1].result).toEqual({ instance_id: 'i-0a1b2c3d4e5f60001', region: 'us-east-1', reboot_requested: true });
    expect(ctx.fake.effects).toEqual(['ec2:RebootInstances us-east-1 i-0a1b2c3d4e5f60001']);
  });

  it("another organization cannot read or test the source, and its runs do not see the source's tools", async () => {
    const other = await wireOrganization(ctx.server, ctx.llm, { approvalWrite: 'allow' });
    expect((await ctx.server.request('GET', `/sources/${ctx.sourceId}`, { token: other.session.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/sources/${ctx.sourceId}/test`, { token: other.session.token })).status).toBe(404);
    const before = ctx.fake.requests.length;
    ctx.llm.script([{ tool_calls: [{ id: 'x1', ...execute('aws.list_instances', {}) }] }, { text: 'no such tool' }]);
    const stream = await send(ctx.server, other, 'list the EC2 instances');
    await stream.ended;
    expect(stream.events.find((event) => event.event === 'tool_result')?.data.result.error.code).toBe('unknown_tool');
    expect(ctx.fake.requests.length).toBe(before);
  });
});

describe('aws source behind the egress guard (EGRESS_ALLOW empty)', () => {
  let server: TestServer;
  let fake: FakeAws;

  beforeAll(async () => {
    fake = await startFakeAws(sampleAccount());
    server = await startTestServer({ EGRESS_ALLOW: '' });
  });
  afterAll(async () => {
    await server.stop();
    await fake.close();
  });

  it('refuses a loopback endpoint when saved, and a name resolving to loopback when called; AWS is never reached', async () => {
    const owner = await server.register();
    const literal = await server.request('POST', '/sources', { token: owner.token, body: { name: 'AWS loopback', connector: 'aws', config: configFor(fake) } });
    expect(literal.status).toBe(422);
    expect(literal.body.error).toMatchObject({ code: 'egress_refused', details: { field: 'config.endpoint', address_class: 'loopback' } });

    const port = new URL(fake.url).port;
    const named = await server.request('POST', '/sources', {
      token: owner.token,
      body: { name: 'AWS by name', connector: 'aws', config: configFor(fake, { endpoint: `http://localhost:${port}` }) },
    });
    expect(named.status, named.text).toBe(201);
    const tested = await server.request('GET', `/sources/${named.body.id}/test`, { token: owner.token });
    expect(tested.status).toBe(422);
    expect(tested.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback' } });
    expect(fake.requests).toEqual([]);
  });
});
