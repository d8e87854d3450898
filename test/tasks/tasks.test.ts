/** /tasks end to end: the real server, the fake LLM over HTTP, runs started by the task actors. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { addMember } from '../helpers/members.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { names, openStream, startFakeLlmServer, wireOrganization } from '../runtime/chat-helpers.js';
import { createPipeline, ingest } from '../ingest/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { createTask, runReaches, runsOf } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

// every token costs 1 USD: a single turn (10 + 20 tokens) costs 30 USD, so a cap is easy to cross
const PRICES = JSON.stringify({ 'gpt-4o-mini': { input_per_mtok: 1_000_000, output_per_mtok: 1_000_000 } });

describe('tasks', () => {
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  beforeAll(async () => ({ server, llm, owner } = await startWiredOrg({ LLM_PRICES: PRICES })));
  afterAll(async () => stopLlmServer({ server, llm }));

  it('creates, reads, lists, patches and deletes tasks with every field', async () => {
    // referenced sources must exist in the organization (test/security/references.test.ts)
    const source = async (name: string): Promise<string> =>
      (await server.request('POST', '/sources', { token: owner.token, body: { name, connector: 'github', config: { auth: { kind: 'pat', token: 't' } } } }))
        .body.id;
    const [sourceA, sourceB] = [await source('Task source A'), await source('Task source B')];
    const body = {
      name: 'Morning digest',
      agent: 'default',
      realm: 'default',
      trigger: { kind: 'schedule', cron: '0 9 * * 1-5' },
      input_template: { instruction: 'Summarize', channel: '#ops' },
      approval_defaults: { write: 'allow' },
      cost_cap_usd_per_day: 2.5,
      max_concurrent_runs: 2,
      enabled_source_ids: [sourceA],
      webhook: { rate_limit_per_minute: 30 },
      enabled: true,
    };
    const created = await createTask(server, owner, body);
    expect(created).toMatchObject({ ...body, trigger: { kind: 'schedule', cron: '0 9 * * 1-5' }, last_fired_at: null });
    const read = await server.request('GET', `/tasks/${created.id}`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.runtime).toMatchObject({ state: 'scheduled', running: 0, pending: 0 });
    expect(typeof read.body.runtime.next_fire_at).toBe('string');

    const patched = await server.request('PATCH', `/tasks/${created.id}`, {
      token: owner.token,
      body: { enabled_source_ids: [sourceB], webhook: { rate_limit_per_minute: 10 }, input: { instruction: 'literal' } },
    });
    expectStatus(patched, 200).toMatchObject({
      enabled_source_ids: [sourceB],
      webhook: { rate_limit_per_minute: 10 },
      input: { instruction: 'literal' },
      input_template: null,
      cost_cap_usd_per_day: 2.5,
    });

    const list = await server.request('GET', '/tasks?limit=200', { token: owner.token });
    expect(list.body.items.map((task: any) => task.id)).toContain(created.id);

    const duplicate = await server.request('POST', '/tasks', { token: owner.token, body: { name: 'Morning digest', trigger: { kind: 'webhook' } } });
    expectError(duplicate, 409, 'conflict');
    const kindChange = await server.request('PATCH', `/tasks/${created.id}`, { token: owner.token, body: { trigger: { kind: 'webhook' } } });
    expectError(kindChange, 400, 'immutable_field');

    const deleted = await server.request('DELETE', `/tasks/${created.id}`, { token: owner.token });
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', `/tasks/${created.id}`, { token: owner.token })).status).toBe(404);
  });

  it('rejects invalid bodies with validation_error', async () => {
    const cases: Record<string, unknown>[] = [
      { trigger: { kind: 'schedule', cron: '0 9 * * *' } },
      { name: 'x', trigger: { kind: 'schedule', cron: '61 * * * *' } },
      { name: 'x', trigger: { kind: 'schedule', cron: '0 0 9 * * *' } },
      { name: 'x', trigger: { kind: 'schedule', cron: '@daily' } },
      { name: 'x', trigger: { kind: 'cron' } },
      { name: 'x', trigger: { kind: 'lifecycle', events: ['source.exploded'] } },
      { name: 'x', trigger: { kind: 'lifecycle', events: [] } },
      { name: 'x', trigger: { kind: 'webhook' }, input: { instruction: 'a' }, input_template: { instruction: 'b' } },
      { name: 'x', trigger: { kind: 'webhook' }, max_concurrent_runs: 0 },
      { name: 'x', trigger: { kind: 'webhook' }, webhook: { rate_limit_per_minute: 0 } },
      { name: 'x', trigger: { kind: 'webhook' }, approval_defaults: { write: 'sometimes' } },
      { name: 'x', trigger: { kind: 'webhook' }, unknown_field: 1 },
    ];
    for (const body of cases) {
      const response = await server.request('POST', '/tasks', { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    const cron = await server.request('POST', '/tasks', { token: owner.token, body: { name: 'x', trigger: { kind: 'schedule', cron: '61 * * * *' } } });
    expect(cron.body.error.message).toContain('minute');
  });

  it('validates templates at save time, naming the error', async () => {
    const bad: [string, string][] = [
      ['{{> header}}', 'partials are not allowed'],
      ['{{shout trigger.body}}', 'unknown helper "shout"'],
      ['{{#with trigger}}{{/with}}', 'unknown block helper "with"'],
      ['{{*decorate}}', 'decorators are not allowed'],
      ['{{#if trigger.body}}unclosed', 'Parse error'],
      ['{{log "x"}}', 'unknown helper "log"'],
    ];
    for (const [template, message] of bad) {
      const response = await server.request('POST', '/tasks', {
        token: owner.token,
        body: { name: `t-${template}`, trigger: { kind: 'webhook' }, input_template: { instruction: template } },
      });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.message, template).toContain(message);
      expect(response.body.error.message).toContain('input_template.instruction');
    }
    const nested = await server.request('POST', '/tasks', {
      token: owner.token,
      body: { name: 'nested bad', trigger: { kind: 'webhook' }, input_template: { instruction: 'ok', filters: { repo: '{{> p}}' } } },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.details.issues[0].path).toBe('input_template.filters.repo');
  });

  it('renders the template from the trigger and runs the agent: history has input, transcript and audit', async () => {
    const task = await createTask(server, owner, {
      name: 'render',
      trigger: { kind: 'webhook' },
      input_template: {
        instruction:
          'First item {{trigger.body.items.[0].name}}; all {{trigger.body}}; {{#each trigger.body.items}}<{{this.name}}>{{/each}}{{#if trigger.body.urgent}} URGENT{{/if}}',
        channel: '#{{lookup trigger.body "team"}}',
      },
    });
    llm.script([{ text: ['Do', 'ne'] }]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, {
      token: owner.token,
      body: { body: { items: [{ name: 'a&b' }, { name: 'c' }], team: 'ops', urgent: true } },
    });
    expect(fire.status).toBe(202);
    expect(fire.body.status).toBe('running');
    const run = await runReaches(server, owner, task.id, fire.body.run_id, 'succeeded');
    expect(run.input).toEqual({
      instruction: 'First item a&b; all {"items":[{"name":"a&b"},{"name":"c"}],"team":"ops","urgent":true}; <a&b><c> URGENT',
      channel: '#ops',
    });
    expect(run.origin).toBe('manual');
    expect(run.artifacts).toEqual([]);
    expect(run.policy_audit).toEqual([]);
    const assistant = run.transcript.find((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.data.content).toBe('Done');
    const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
    expect(sent.find((message) => message.role === 'user')?.content).toContain('First item a&b');
    expect(sent.find((message) => message.role === 'user')?.content).toContain('"channel": "#ops"');

    // a finished run replays its events and closes
    const stream = await openStream(server.url, 'GET', `/tasks/${task.id}/runs/${run.id}/events`, { token: owner.token });
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'content_delta', 'content_delta', 'message_end']);
  });

  it('streams a live run with its approval inline, and takes the approval', async () => {
    const task = await createTask(server, owner, { name: 'approve', trigger: { kind: 'webhook' }, input: { instruction: 'remember it' } });
    llm.script([
      {
        tool_calls: [{ name: 'execute_connector_tool', arguments: { tool: 'memory.store', arguments: { kind: 'fact', realm: 'default', text: 'task fact' } } }],
      },
      { text: 'Stored' },
    ]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    const stream = await openStream(server.url, 'GET', `/tasks/${task.id}/runs/${fire.body.run_id}/events`, { token: owner.token });
    const approval = await stream.waitFor((event) => event.event === 'approval_required');
    expect(approval.data.tool).toBe('memory.store');
    const answer = await server.request('POST', `/tasks/${task.id}/runs/${fire.body.run_id}/approvals/${approval.data.approval_id}`, {
      token: owner.token,
      body: { approved: true },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.decision).toBe('approved');
    await stream.ended;
    expect(names(stream.events).at(-1)).toBe('message_end');
    const run = await runReaches(server, owner, task.id, fire.body.run_id, 'succeeded');
    expect(run.policy_audit.map((entry: any) => entry.type)).toEqual(['approval_required', 'approval_decision']);
    expect(run.policy_audit[1]).toMatchObject({ decision: 'approved', decided_by: owner.user.id });
    const again = await server.request('POST', `/tasks/${task.id}/runs/${fire.body.run_id}/approvals/${approval.data.approval_id}`, {
      token: owner.token,
      body: { approved: false },
    });
    expect(again.status).toBe(409);
    const unknown = await server.request('POST', `/tasks/${task.id}/runs/${fire.body.run_id}/approvals/apr_nope`, {
      token: owner.token,
      body: { approved: true },
    });
    expect(unknown.status).toBe(404);
  });

  it('keeps max_concurrent_runs: extra fires wait as pending in order, a pending fire can be cancelled', async () => {
    const task = await createTask(server, owner, { name: 'one at a time', trigger: { kind: 'webhook' }, input: { instruction: 'go' }, max_concurrent_runs: 1 });
    llm.script([{ text: ['first', ' done'], hold_after_chunks: 1 }, { text: 'second' }]);
    const first = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    const second = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    const third = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expect([first.body.status, second.body.status, third.body.status]).toEqual(['running', 'pending', 'pending']);
    await llm.whenHeld();
    const view = await server.request('GET', `/tasks/${task.id}`, { token: owner.token });
    expect(view.body.runtime).toMatchObject({ running: 1, pending: 2 });
    const statuses = new Map((await runsOf(server, owner, task.id)).map((run) => [run.id, run.status]));
    expect(statuses.get(second.body.run_id)).toBe('pending');

    // a pending run's stream opens now and carries the run once it starts
    const secondStream = await openStream(server.url, 'GET', `/tasks/${task.id}/runs/${second.body.run_id}/events`, { token: owner.token });
    expect(secondStream.status).toBe(200);
    const cancel = await server.request('POST', `/tasks/${task.id}/runs/${third.body.run_id}/cancel`, { token: owner.token });
    expect(cancel.status).toBe(202);
    expect(cancel.body.status).toBe('cancelled');
    await runReaches(server, owner, task.id, third.body.run_id, 'cancelled');

    llm.release();
    await runReaches(server, owner, task.id, first.body.run_id, 'succeeded');
    const secondRun = await runReaches(server, owner, task.id, second.body.run_id, 'succeeded');
    await secondStream.ended;
    expect(names(secondStream.events)).toEqual(['message_start', 'content_delta', 'message_end']);
    expect(secondStream.events[1]?.data).toEqual({ delta: 'second' });
    expect(Date.parse(secondRun.started_at)).toBeGreaterThanOrEqual(
      Date.parse((await runReaches(server, owner, task.id, first.body.run_id, 'succeeded')).finished_at),
    );
    const finished = await server.request('POST', `/tasks/${task.id}/runs/${first.body.run_id}/cancel`, { token: owner.token });
    expect(finished.status).toBe(409);
  });

  it('refuses a fire at the pending bound (100): recorded as failed queue_full, 429 for a manual fire', async () => {
    const task = await createTask(server, owner, { name: 'bounded', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    llm.script([{ text: ['a', 'b'], hold_after_chunks: 1 }]);
    const first = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expect(first.body.status).toBe('running');
    await llm.whenHeld();
    const pending: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
      expect(fire.body.status).toBe('pending');
      pending.push(fire.body.run_id);
    }
    const refused = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('60');
    const run = await runReaches(server, owner, task.id, refused.body.error.details.run_id, 'failed');
    expect(run.reason).toBe('queue_full');
    // the webhook path still stores and acknowledges the delivery, saying the fire was refused
    const body = '{}';
    const hook = await server.request('POST', task.trigger.url.slice(task.trigger.url.indexOf('/api/v1') + 7), {
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signHmac(task.trigger.secret, Buffer.from(body)) },
    });
    expect(hook.status).toBe(202);
    expect(hook.body.status).toBe('refused');
    // disabling the task cancels what waits
    await server.request('PATCH', `/tasks/${task.id}`, { token: owner.token, body: { enabled: false } });
    await runReaches(server, owner, task.id, pending[99] ?? '', 'cancelled');
    llm.release();
    await runReaches(server, owner, task.id, first.body.run_id, 'succeeded');
  });

  it('cancels a running run through its cancel flag', async () => {
    const task = await createTask(server, owner, { name: 'cancel running', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    llm.script([{ text: ['a', 'b'], hold_after_chunks: 1 }]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    await llm.whenHeld();
    const cancel = await server.request('POST', `/tasks/${task.id}/runs/${fire.body.run_id}/cancel`, { token: owner.token });
    expect(cancel.body.status).toBe('cancelling');
    llm.release();
    await runReaches(server, owner, task.id, fire.body.run_id, 'cancelled');
  });

  it('kills a run over the daily cost cap, and refuses the next one before any model call', async () => {
    const task = await createTask(server, owner, { name: 'capped', trigger: { kind: 'webhook' }, input: { instruction: 'go' }, cost_cap_usd_per_day: 1 });
    llm.script([{ tool_calls: [{ name: 'search_connector_tools', arguments: { query: 'anything' } }] }, { text: 'never reached' }]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    const run = await runReaches(server, owner, task.id, fire.body.run_id, 'failed');
    expect(run.reason).toBe('cost_cap_exceeded');
    expect(run.cost_usd).toBe(30);
    const requestsBefore = llm.requests.length;
    const next = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    const refused = await runReaches(server, owner, task.id, next.body.run_id, 'failed');
    expect(refused.reason).toBe('cost_cap_exceeded');
    expect(llm.requests.length).toBe(requestsBefore);
    llm.reset();
  });

  it('fires lifecycle tasks on platform events (an ingest failure)', async () => {
    const task = await createTask(server, owner, {
      name: 'on ingest failure',
      trigger: { kind: 'lifecycle', events: ['ingest.failed'] },
      input_template: { instruction: 'Ingest failed: {{trigger.body.event}} {{trigger.body.code}}' },
    });
    llm.script([{ text: 'looked into it' }]);
    const pipeline = await createPipeline(server, owner);
    const refused = await ingest(server, pipeline.token, '{"ok":1}\n{broken\n');
    expect(refused.status).toBe(400);
    const [run] = await eventually(
      async () => {
        const runs = await runsOf(server, owner, task.id);
        return runs.length > 0 && runs[0].status === 'succeeded' ? runs : undefined;
      },
      { what: 'a lifecycle run' },
    );
    expect(run.origin).toBe('lifecycle');
    expect(run.input.instruction).toBe('Ingest failed: ingest.failed bad_ndjson');
    // another organization's event fires nothing here
    const other = await server.register();
    const otherPipeline = await createPipeline(server, other);
    expect((await ingest(server, otherPipeline.token, '{broken\n')).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await runsOf(server, owner, task.id)).toHaveLength(1);
  });

  it('a disabled task is not fired; enabling it again starts its actor', async () => {
    const task = await createTask(server, owner, { name: 'toggle', trigger: { kind: 'webhook' }, input: { instruction: 'go' }, enabled: false });
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expect(fire.status).toBe(409);
    expect((await server.request('GET', `/tasks/${task.id}`, { token: owner.token })).body.runtime).toBeNull();
    await server.request('PATCH', `/tasks/${task.id}`, { token: owner.token, body: { enabled: true } });
    expect((await server.request('GET', `/tasks/${task.id}`, { token: owner.token })).body.runtime).toMatchObject({ state: 'listening' });
  });

  it('isolates organizations and checks permissions', async () => {
    const task = await createTask(server, owner, { name: 'private', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    const other = await server.register();
    for (const [method, path] of [
      ['GET', `/tasks/${task.id}`],
      ['PATCH', `/tasks/${task.id}`],
      ['DELETE', `/tasks/${task.id}`],
      ['POST', `/tasks/${task.id}/run`],
      ['GET', `/tasks/${task.id}/runs`],
      ['GET', `/tasks/${task.id}/deliveries`],
      ['POST', `/tasks/${task.id}/rotate-secret`],
    ] as const) {
      const response = await server.request(method, path, { token: other.token, ...(method === 'PATCH' ? { body: { enabled: false } } : {}) });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await server.request('GET', '/tasks', { token: other.token })).body.total).toBe(0);
    const viewer = await addMember(server, owner, 'viewer');
    expect((await server.request('GET', `/tasks/${task.id}`, { token: viewer.token })).status).toBe(200);
    const forbidden = await server.request('POST', `/tasks/${task.id}/run`, { token: viewer.token });
    expect(forbidden.status).toBe(403);
    expect((await server.request('GET', '/tasks')).status).toBe(401);
  });
});

describe('tasks across a restart', () => {
  it('keeps pending fires: they run, in order, after the next start', async () => {
    const llm = await startFakeLlmServer();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-task-restart-'));
    const env = { LLM_API_KEY: FAKE_LLM_API_KEY, JWT_SECRET: randomBytes(32).toString('hex') };
    let server = await startTestServer(env, { dataDir });
    try {
      const owner = (await wireOrganization(server, llm)).session;
      const task = await createTask(server, owner, { name: 'survivor', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
      llm.script([{ text: ['held', ' then done'], hold_after_chunks: 1 }]);
      const first = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
      const second = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
      const third = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
      expect([first.body.status, second.body.status, third.body.status]).toEqual(['running', 'pending', 'pending']);
      await llm.whenHeld();
      const stopping = server.stop();
      llm.release();
      await stopping;

      llm.script([{ text: 'second' }, { text: 'third' }]);
      server = await startTestServer(env, { dataDir });
      const secondRun = await runReaches(server, owner, task.id, second.body.run_id, 'succeeded');
      const thirdRun = await runReaches(server, owner, task.id, third.body.run_id, 'succeeded');
      expect(Date.parse(thirdRun.started_at)).toBeGreaterThanOrEqual(Date.parse(secondRun.finished_at));
      const firstRun = await server.request('GET', `/tasks/${task.id}/runs/${first.body.run_id}`, { token: owner.token });
      expect(['succeeded', 'failed']).toContain(firstRun.body.status);
    } finally {
      await server.stop();
      await llm.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
