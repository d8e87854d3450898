/**
 * Model turns of task runs on real worker processes (feature `workers`): the
 * run stays in the gateway (tools, transcript, events), each model turn is a
 * `model_turn` job on queue `agent` performed by a worker against the fake
 * LLM. No live worker: a manual run answers 503 worker_unavailable. A worker
 * SIGKILLed while the model holds its turn: a second worker performs the turn
 * after the (2 s) lease, and the run ends once with one final message.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { eventually } from '../helpers/eventually.js';
import { expectError } from '../helpers/expect-status.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { Session, TestServer } from '../helpers/server.js';
import { execute, names, openStream, streamedText } from '../runtime/chat-helpers.js';
import { createTask, runEnds } from '../tasks/helpers.js';
import { startWorker, type WorkerProcess, WORKER_TOKEN, WORKERS_ENV } from './helpers.js';

describe('agent runs on workers', { timeout: 120_000 }, () => {
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  const started: WorkerProcess[] = [];
  beforeAll(async () => ({ server, llm, owner } = await startWiredOrg(WORKERS_ENV)));
  afterAll(async () => stopLlmServer({ server, llm }));
  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.kill()));
    llm.reset();
  });

  const worker = (): WorkerProcess => {
    // the fake LLM listens on loopback: the worker's egress guard lets it through, as the gateway's does in tests
    const process = startWorker(server.url, ['--queues', 'agent'], { EGRESS_ALLOW: '127.0.0.1,::1' });
    started.push(process);
    return process;
  };
  const job = (runId: string, turn: number) => server.service.services.workers.queue.get(`${runId}.turn.${turn}`);
  const task = (name: string, fields: Record<string, unknown> = {}) =>
    createTask(server, owner, { name, trigger: { kind: 'webhook' }, input: { instruction: 'go' }, approval_defaults: { write: 'allow' }, ...fields });

  it('answers 503 worker_unavailable to a manual run while no worker serves the agent queue, and creates no run', async () => {
    const created = await task('no worker');
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: owner.token });
    expectError(fire, 503, 'worker_unavailable');
    const runs = await server.request('GET', `/tasks/${created.id}/runs`, { token: owner.token });
    expect(runs.body.items).toEqual([]);
    expect(llm.requests).toHaveLength(0);
  });

  it('keeps a fired run running with its turn waiting in the agent queue until a worker comes; a cancel stops the wait', async () => {
    const created = await task('fired without worker', { max_concurrent_runs: 2 });
    const fire = (): Promise<{ run_id: string }> =>
      server.service.services.tasks.fire(owner.organization.id, created.id, { origin: 'schedule', body: null, headers: {}, delivery_id: null });
    const cancelled = (await fire()).run_id;
    const waiting = (await fire()).run_id;
    await eventually(async () => ((await job(cancelled, 1))?.state === 'pending' && (await job(waiting, 1))?.state === 'pending' ? true : undefined), {
      what: 'both first turns queued',
    });
    const view = await server.request('GET', `/tasks/${created.id}/runs/${waiting}`, { token: owner.token });
    expect(view.body.status).toBe('running');
    const status = await server.request('GET', '/workers/status', { token: owner.token });
    expect(status.body.queues.agent.depth).toBeGreaterThanOrEqual(2);
    const cancel = await server.request('POST', `/tasks/${created.id}/runs/${cancelled}/cancel`, { token: owner.token });
    expect(cancel.status).toBe(202);
    expect((await runEnds(server, owner, created.id, cancelled)).status).toBe('cancelled');

    llm.script([{ text: 'late but done' }]);
    const one = worker();
    const run = await runEnds(server, owner, created.id, waiting);
    expect(run.status).toBe('succeeded');
    // the cancelled run's turn is claimed too, finds its run gone and completes without calling the model
    await one.logged('job completed', { job_id: `${cancelled}.turn.1` });
    expect(await job(cancelled, 1)).toMatchObject({ state: 'done', result: { abandoned: true } });
    expect(llm.requests).toHaveLength(1);
  });

  it('runs a manual task run through a worker; the run events stream from the gateway', async () => {
    const one = worker();
    await one.logged('worker registered');
    const created = await task('on a worker');
    llm.script([{ text: ['Hello', ' from a worker'] }]);
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: owner.token });
    expect(fire.status).toBe(202);
    const runId = fire.body.run_id as string;
    const stream = await openStream(server.url, 'GET', `/tasks/${created.id}/runs/${runId}/events`, { token: owner.token });
    await stream.ended;
    const run = await runEnds(server, owner, created.id, runId);
    expect(run.status).toBe('succeeded');
    expect(names(stream.events).filter((name) => name === 'content_delta').length).toBeGreaterThan(0);
    expect(streamedText(stream.events)).toBe('Hello from a worker');
    // the worker performed the turn: its job is done, and the model saw one request with the organization's key
    await one.logged('job completed', { job_id: `${runId}.turn.1` });
    // (not `deliveries: 1`: the pending claim of a worker an earlier test killed may have taken the job and given it back, a delivery)
    expect(await job(runId, 1)).toMatchObject({ state: 'done', kind: 'model_turn', queue: 'agent' });
    expect((await job(runId, 1))?.payload).toEqual({ run_id: runId, turn: 1 });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.api_key).toBe(llm.apiKey);
  });

  it('runs the tool in the gateway between two turns on the worker', async () => {
    const one = worker();
    await one.logged('worker registered');
    const created = await task('tool between turns');
    llm.script([{ tool_calls: [execute('memory.store', { kind: 'fact', realm: 'default', text: 'worker fact' })] }, { text: 'Stored' }]);
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const run = await runEnds(server, owner, created.id, runId);
    expect(run.status).toBe('succeeded');
    expect(await job(runId, 1)).toMatchObject({ state: 'done' });
    expect(await job(runId, 2)).toMatchObject({ state: 'done' });
    const second = llm.requests[1]?.body?.['messages'] as { role: string; content: string }[];
    expect(second.some((message) => message.role === 'tool')).toBe(true);
    const assistant = run.transcript.filter((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.at(-1).data.content).toBe('Stored');
    const memory = await server.request('GET', '/memory?limit=50', { token: owner.token });
    expect(JSON.stringify(memory.body)).toContain('worker fact');
  });

  it("fails the run with the provider's refusal, performed once on the worker (not retried)", async () => {
    const one = worker();
    await one.logged('worker registered');
    const created = await task('refused by the model');
    llm.script([{ status: 401 }]);
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const run = await runEnds(server, owner, created.id, runId);
    expect(run.status).toBe('failed');
    const done = await job(runId, 1);
    // (not `deliveries: 1`: the pending claim of a worker an earlier test killed may have taken the job and given it back, a delivery)
    expect(done).toMatchObject({ state: 'done', result: { failure: { reason: run.reason } } });
    expect(run.reason).toMatch(/^llm_/);
    expect(llm.requests).toHaveLength(1);
  });

  it('finishes a turn on a second worker after the first is SIGKILLed mid-turn; the run ends once', async () => {
    const first = worker();
    await first.logged('worker registered');
    const created = await task('killed worker');
    llm.script([{ text: ['partial', ' lost'], hold_after_chunks: 1 }, { text: 'final answer' }]);
    const fire = await server.request('POST', `/tasks/${created.id}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    await llm.whenHeld();
    const firstStart = await first.logged('job started', { job_id: `${runId}.turn.1` });
    // the second worker is up before the first dies, so the wait below is the lease, not a process start
    const second = worker();
    await second.logged('worker registered');
    await first.kill();
    const redelivered = await second.logged('job started', { job_id: `${runId}.turn.1` });
    expect(redelivered['delivery']).toBeGreaterThan(1);
    const run = await runEnds(server, owner, created.id, runId);
    expect(run.status).toBe('succeeded');
    const assistant = run.transcript.filter((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.map((entry: any) => entry.data.content)).toEqual(['final answer']);
    expect(await job(runId, 1)).toMatchObject({ state: 'done' });
    expect(await job(runId, 2)).toBeNull();
    expect(llm.requests).toHaveLength(2);
    const stream = await openStream(server.url, 'GET', `/tasks/${created.id}/runs/${runId}/events`, { token: owner.token });
    await stream.ended;
    expect(names(stream.events).filter((name) => name === 'message_end')).toHaveLength(1);
    // the lost delivery's fence is heard no more
    const workerAuth = { authorization: `Bearer ${WORKER_TOKEN}` };
    const stale = String(firstStart['fence']);
    const input = await fetch(`${server.url}/workers/jobs/${runId}.turn.1/input?fence=${encodeURIComponent(stale)}`, { headers: workerAuth });
    expect(input.status).toBe(409);
    expect(((await input.json()) as { error: { code: string } }).error.code).toBe('lease_lost');
    const late = await fetch(`${server.url}/workers/jobs/${runId}.turn.1/events`, {
      method: 'POST',
      headers: { ...workerAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ fence: stale, deltas: ['late'] }),
    });
    expect(late.status).toBe(409);
  });
});
