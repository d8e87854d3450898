/**
 * Issue 19: a task run whose model turn waits in the `agent` queue for a
 * worker parks like an approval wait (runtime/agent/parking.ts,
 * domains/workers/agent-turns.ts). With AGENT_PARK_AFTER_MS small and no
 * worker, the run is persisted (`parked_at`) and its actor stopped; a worker
 * started later claims the turn, reads its input from the parked run, streams
 * its deltas to the run's events while it is parked, and completes: the run
 * comes back, takes the turn once and succeeds. A cancel while parked ends
 * it and its queued job completes without calling the model; a cancel while
 * a worker holds the turn ends the run at once and the turn as abandoned. A gateway
 * restart while parked and queued keeps it: the turn is queued again under
 * the same id and a worker then completes it; a run still live in its wait
 * at a stop parks then, instead of ending `interrupted`. Real server, real worker
 * processes, the in-process queue (or JetStream when NATS_URL is set).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { asOrgId } from '../../runtime/store/types.js';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { execute, names, openStream, streamedText, wireOrganization } from '../runtime/chat-helpers.js';
import { createTask, runEnds } from '../tasks/helpers.js';
import { startWorker, type WorkerProcess, WORKERS_ENV } from './helpers.js';

describe('task runs parked on a model turn queued for a worker', { timeout: 180_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-turns-'));
  const env = { ...WORKERS_ENV, LLM_API_KEY: FAKE_LLM_API_KEY, AGENT_PARK_AFTER_MS: '100', JWT_SECRET: randomBytes(32).toString('hex') };
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  const started: WorkerProcess[] = [];
  beforeAll(async () => {
    llm = await startFakeLlmServer();
    server = await startTestServer(env, { dataDir });
    owner = (await wireOrganization(server, llm)).session;
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.kill()));
    llm.reset();
  });
  afterAll(async () => {
    await server.stop();
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const worker = (): WorkerProcess => {
    const process = startWorker(server.url, ['--queues', 'agent'], { EGRESS_ALLOW: '127.0.0.1,::1' });
    started.push(process);
    return process;
  };
  const org = () => asOrgId(owner.organization.id);
  const job = (runId: string, turn: number) => server.service.services.workers.queue.get(`${runId}.turn.${turn}`);
  const record = (runId: string) => server.service.services.collections.agentRuns.get(org(), runId);
  const actorIds = async () => ((await server.request('GET', '/runtime/actors', { token: owner.token })).body.items as { id: string }[]).map((a) => a.id);

  /** a task run fired while no worker serves `agent` (a manual run would be refused): it waits until it is parked */
  async function parkedRun(name: string): Promise<{ taskId: string; runId: string }> {
    const task = await createTask(server, owner, { name, trigger: { kind: 'webhook' }, input: { instruction: 'go' }, approval_defaults: { write: 'allow' } });
    const fired = await server.service.services.tasks.fire(org(), task.id, { origin: 'schedule', body: null, headers: {}, delivery_id: null });
    const runId = fired.run_id;
    await eventually(async () => ((await record(runId))?.parked_at != null ? true : undefined), { what: `run ${runId} to park` });
    return { taskId: task.id as string, runId };
  }

  it('parks a run whose turn waits for a worker; a worker started later performs the turns and the run finishes once', async () => {
    llm.script([{ tool_calls: [execute('memory.store', { kind: 'fact', realm: 'default', text: 'parked fact' })] }, { text: ['Stored', ' while parked'] }]);
    const { taskId, runId } = await parkedRun('parks on its turn');
    expect((await job(runId, 1))?.state).toBe('pending');
    expect(await actorIds()).not.toContain(runId);
    expect(server.service.services.agentRuntime.parkedRuns).toBe(1);
    const view = await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: owner.token });
    expect(view.body.status).toBe('running');
    // the payload holds ids only: the key is never in the queue
    expect((await job(runId, 1))?.payload).toEqual({ run_id: runId, turn: 1 });

    const stream = await openStream(server.url, 'GET', `/tasks/${taskId}/runs/${runId}/events`, { token: owner.token });
    const one = worker();
    await one.logged('job completed', { job_id: `${runId}.turn.1` });
    await one.logged('job completed', { job_id: `${runId}.turn.2` });
    const run = await runEnds(server, owner, taskId, runId);
    await stream.ended;
    expect(run.status).toBe('succeeded');
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[0]?.api_key).toBe(llm.apiKey);
    // the second turn saw the tool's result, run in the gateway between the turns
    const second = llm.requests[1]?.body?.['messages'] as { role: string }[];
    expect(second.some((message) => message.role === 'tool')).toBe(true);
    const assistant = run.transcript.filter((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.map((entry: any) => entry.data.content)).toEqual(['', 'Stored while parked']);
    expect(streamedText(stream.events)).toBe('Stored while parked');
    expect(names(stream.events).filter((name) => name === 'message_end')).toHaveLength(1);
    const memory = await server.request('GET', '/memory?limit=50', { token: owner.token });
    expect(JSON.stringify(memory.body)).toContain('parked fact');
    expect((await record(runId))?.parked_at ?? null).toBeNull();
    expect(server.service.services.agentRuntime.parkedRuns).toBe(0);

    // the stored events, read after the end, hold the deltas once and one end
    const replay = await openStream(server.url, 'GET', `/tasks/${taskId}/runs/${runId}/events`, { token: owner.token });
    await replay.ended;
    expect(streamedText(replay.events)).toBe('Stored while parked');
    expect(names(replay.events).filter((name) => name === 'message_end')).toHaveLength(1);
  });

  it('cancels a parked run waiting for its turn; the queued job then completes without calling the model', async () => {
    const { taskId, runId } = await parkedRun('cancelled while parked');
    const cancel = await server.request('POST', `/tasks/${taskId}/runs/${runId}/cancel`, { token: owner.token });
    expect(cancel.status).toBe(202);
    expect((await runEnds(server, owner, taskId, runId)).status).toBe('cancelled');
    expect(server.service.services.agentRuntime.parkedRuns).toBe(0);
    const one = worker();
    await one.logged('job completed', { job_id: `${runId}.turn.1` });
    expect(await job(runId, 1)).toMatchObject({ state: 'done', result: { abandoned: true } });
    expect(llm.requests).toHaveLength(0);
  });

  it('a cancel while a worker holds the turn ends the run at once; the worker then ends the turn abandoned', async () => {
    const one = worker();
    await one.logged('worker registered');
    const task = await createTask(server, owner, { name: 'cancelled mid-turn', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    llm.script([{ text: ['partial', ' rest'], hold_after_chunks: 1 }]);
    const runId = (await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token })).body.run_id as string;
    await llm.whenHeld();
    const cancel = await server.request('POST', `/tasks/${task.id}/runs/${runId}/cancel`, { token: owner.token });
    expect(cancel.status).toBe(202);
    const run = await runEnds(server, owner, task.id, runId);
    expect(run.status).toBe('cancelled');
    llm.release();
    await one.logged('job completed', { job_id: `${runId}.turn.1` });
    // (not `deliveries: 1`: the pending claim of a worker an earlier test killed may have taken the job and given it back, a delivery)
    expect(await job(runId, 1)).toMatchObject({ state: 'done', result: { abandoned: true } });
    expect(llm.requests).toHaveLength(1);
  });

  it('keeps a parked run and its queued turn across a gateway restart; a worker then completes it', async () => {
    llm.script([{ text: ['after', ' the restart'] }]);
    const { taskId, runId } = await parkedRun('survives a restart');
    await server.stop();
    server = await startTestServer(env, { dataDir });
    expect(server.service.services.agentRuntime.parkedRuns).toBe(1);
    // the in-process queue forgot the job: it is queued again under the same id (on JetStream it was kept)
    await eventually(async () => ((await job(runId, 1))?.state === 'pending' ? true : undefined), { what: 'the turn queued again' });
    expect((await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: owner.token })).body.status).toBe('running');

    const one = worker();
    await one.logged('job completed', { job_id: `${runId}.turn.1` });
    const run = await runEnds(server, owner, taskId, runId);
    expect(run.status).toBe('succeeded');
    const assistant = run.transcript.filter((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.map((entry: any) => entry.data.content)).toEqual(['after the restart']);
    expect(llm.requests).toHaveLength(1);
    const replay = await openStream(server.url, 'GET', `/tasks/${taskId}/runs/${runId}/events`, { token: owner.token });
    await replay.ended;
    expect(streamedText(replay.events)).toBe('after the restart');
  });
});

describe('a run waiting for its turn at a gateway stop', { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-turns-stop-'));
  // it never parks for being idle: only the stop parks it
  const env = { ...WORKERS_ENV, LLM_API_KEY: FAKE_LLM_API_KEY, AGENT_PARK_AFTER_MS: '600000', JWT_SECRET: randomBytes(32).toString('hex') };
  let server: TestServer,
    llm: FakeLlmServer,
    owner: Session,
    one: WorkerProcess | null = null;
  beforeAll(async () => {
    llm = await startFakeLlmServer();
    server = await startTestServer(env, { dataDir });
    owner = (await wireOrganization(server, llm)).session;
  });
  afterAll(async () => {
    await one?.kill();
    await server.stop();
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('parks at the stop instead of ending interrupted; after the start a worker completes its turn', async () => {
    const org = asOrgId(owner.organization.id);
    const task = await createTask(server, owner, {
      name: 'stopped',
      trigger: { kind: 'webhook' },
      input: { instruction: 'go' },
      approval_defaults: { write: 'allow' },
    });
    const runId = (await server.service.services.tasks.fire(org, task.id, { origin: 'schedule', body: null, headers: {}, delivery_id: null })).run_id;
    await eventually(async () => ((await server.service.services.workers.queue.get(`${runId}.turn.1`))?.state === 'pending' ? true : undefined), {
      what: 'the turn queued',
    });
    expect((await server.service.services.collections.agentRuns.get(org, runId))?.parked_at ?? null).toBeNull();
    await server.stop();
    server = await startTestServer(env, { dataDir });
    expect(server.service.services.agentRuntime.parkedRuns).toBe(1);
    expect((await server.request('GET', `/tasks/${task.id}/runs/${runId}`, { token: owner.token })).body.status).toBe('running');

    llm.script([{ text: 'after the stop' }]);
    one = startWorker(server.url, ['--queues', 'agent'], { EGRESS_ALLOW: '127.0.0.1,::1' });
    const run = await runEnds(server, owner, task.id, runId);
    expect(run.status).toBe('succeeded');
    const assistant = run.transcript.filter((entry: any) => entry.type === 'message' && entry.data.role === 'assistant');
    expect(assistant.map((entry: any) => entry.data.content)).toEqual(['after the stop']);
    expect(llm.requests).toHaveLength(1);
  });
});
