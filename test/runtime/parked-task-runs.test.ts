/**
 * Parked task runs (runtime/agent/parking.ts, the `task` resumer in
 * domains/tasks/task-launch.ts): a task run idle in an approval wait for
 * AGENT_PARK_AFTER_MS is persisted and its actor stopped; the approval
 * answered over REST brings it back, also after a restart, and the task run
 * ends with its agent run. The simulated runtime clock passes the idle period.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTask, runEnds, runReaches } from '../tasks/helpers.js';
import { execute, openStream, wireOrganization, type ChatOrg } from './chat-helpers.js';

const PARK_AFTER_MS = 1000;

describe('parked task runs', () => {
  const clock = simulatedClock('2026-11-24T10:00:00.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-tasks-'));
  const env = { LLM_API_KEY: FAKE_LLM_API_KEY, AGENT_PARK_AFTER_MS: String(PARK_AFTER_MS), JWT_SECRET: randomBytes(32).toString('hex') };
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => {
    llm = await startFakeLlmServer();
    server = await startTestServer(env, { clock, dataDir });
  });
  afterAll(async () => {
    await server.stop();
    await llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const runtime = () => server.service.services.agentRuntime;
  const note = (id: string, text: string) => ({ tool_calls: [{ id, ...execute('memory.store', { kind: 'note', realm: 'default', text }) }] });
  const memories = async (org: ChatOrg) => (await server.request('GET', '/memory', { token: org.session.token })).body.total as number;
  const actorIds = async (org: ChatOrg) =>
    ((await server.request('GET', '/runtime/actors', { token: org.session.token })).body.items as { id: string }[]).map((actor) => actor.id);

  /** fires a task whose run asks for an approval, passes the idle period and waits until the run is parked */
  async function parkedTaskRun(org: ChatOrg, name: string) {
    const task = await createTask(server, org.session, { name, trigger: { kind: 'webhook' }, input: { instruction: 'remember it' }, max_concurrent_runs: 1 });
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token });
    expect(fire.status).toBe(202);
    const runId = fire.body.run_id as string;
    const stream = await openStream(server.url, 'GET', `/tasks/${task.id}/runs/${runId}/events`, { token: org.session.token });
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    stream.close();
    expect(await actorIds(org)).toContain(runId);
    const parkedBefore = runtime().parkedRuns;
    clock.increment(PARK_AFTER_MS + 10);
    await eventually(() => (runtime().parkedRuns > parkedBefore ? true : undefined), { what: 'the task run to park' });
    return { taskId: task.id as string, runId, approvalId: required.data.approval_id as string };
  }

  const approve = (org: ChatOrg, taskId: string, runId: string, approvalId: string, approved = true) =>
    server.request('POST', `/tasks/${taskId}/runs/${runId}/approvals/${approvalId}`, { token: org.session.token, body: { approved } });

  it('parks an idle approval wait of a task run; approved over REST, it comes back and the task run succeeds', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('t1', 'task note'), { text: 'stored by the task' }]);
    const { taskId, runId, approvalId } = await parkedTaskRun(org, 'parks');
    expect(await actorIds(org)).not.toContain(runId);
    // the task run still shows as running (its agent run awaits the approval)
    expect((await runReaches(server, org.session, taskId, runId, 'running')).status).toBe('running');
    // another organization cannot answer it
    const other = await wireOrganization(server, llm);
    expect((await approve(other, taskId, runId, approvalId)).status).toBe(404);

    const answer = await approve(org, taskId, runId, approvalId);
    expect(answer.status).toBe(200);
    expect(answer.body.decision).toBe('approved');
    const run = await runEnds(server, org.session, taskId, runId);
    expect(run.status).toBe('succeeded');
    expect(await memories(org)).toBe(1);
    expect(run.policy_audit.map((entry: any) => entry.type)).toEqual(['approval_required', 'approval_decision']);
    // the task's slot is free again: a second fire runs at once
    llm.script([{ text: 'second' }]);
    const second = await server.request('POST', `/tasks/${taskId}/run`, { token: org.session.token });
    expect((await runEnds(server, org.session, taskId, second.body.run_id)).status).toBe('succeeded');
    expect((await approve(org, taskId, runId, approvalId, false)).status).toBe(409);
  });

  it('a parked task run survives a restart: it keeps its slot, is approved after it and succeeds', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('t2', 'after restart')]);
    const { taskId, runId, approvalId } = await parkedTaskRun(org, 'restarts');

    await server.stop();
    server = await startTestServer(env, { clock, dataDir });
    expect(runtime().parkedRuns).toBe(1);
    const task = await server.request('GET', `/tasks/${taskId}`, { token: org.session.token });
    expect(task.body.runtime).toMatchObject({ running: 1, pending: 0 });
    expect((await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: org.session.token })).body.status).toBe('running');

    llm.script([{ text: 'stored after restart' }]);
    const answer = await approve(org, taskId, runId, approvalId);
    expect(answer.status).toBe(200);
    const run = await runEnds(server, org.session, taskId, runId);
    expect(run.status).toBe('succeeded');
    expect(await memories(org)).toBe(1);
    await eventually(
      async () => ((await server.request('GET', `/tasks/${taskId}`, { token: org.session.token })).body.runtime.running === 0 ? true : undefined),
      {
        what: 'the slot to be free',
      },
    );
  });

  it('a parked task run cancelled over REST ends as cancelled', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('t3', 'cancelled')]);
    const { taskId, runId } = await parkedTaskRun(org, 'cancels');
    const cancel = await server.request('POST', `/tasks/${taskId}/runs/${runId}/cancel`, { token: org.session.token });
    expect(cancel.status).toBe(202);
    expect((await runEnds(server, org.session, taskId, runId)).status).toBe('cancelled');
    expect(await memories(org)).toBe(0);
  });
});
