/**
 * Parked workflow steps (runtime/agent/parking.ts, the `workflow_step`
 * resumer in domains/orchestrator/runner.ts): an agent step's run idle in an
 * approval wait for AGENT_PARK_AFTER_MS is persisted and its actor stopped
 * while the step stays running; the approval answered over REST brings it
 * back, also after a restart, and the workflow goes on to its next step. The
 * simulated runtime clock passes the idle period.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { execute, wireOrganization } from '../runtime/chat-helpers.js';
import { agentStep, createWorkflow, ON, runUntil, startRun, stepOf, userTexts } from './helpers.js';

const PARK_AFTER_MS = 1000;

describe('parked workflow steps', () => {
  const clock = simulatedClock('2026-11-25T10:00:00.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-steps-'));
  const env = { ...ON, LLM_API_KEY: FAKE_LLM_API_KEY, AGENT_PARK_AFTER_MS: String(PARK_AFTER_MS), JWT_SECRET: randomBytes(32).toString('hex') };
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
  const memories = async (session: Session) => (await server.request('GET', '/memory', { token: session.token })).body.total as number;
  const actorIds = async (session: Session) =>
    ((await server.request('GET', '/runtime/actors', { token: session.token })).body.items as { id: string }[]).map((actor) => actor.id);

  /** a workflow `write` (asks to store a note) -> `next`, started; resolves once `write`'s agent run is parked */
  async function parkedStep(session: Session, name: string) {
    const workflow = await createWorkflow(server, session, {
      name,
      steps: [agentStep('write', 'note it'), agentStep('next', 'after {{steps.write.output}}', { needs: ['write'] })],
    });
    const run = await startRun(server, session, workflow.id);
    const running = await runUntil(server, session, workflow.id, run.id, (body) => stepOf(body, 'write').agent_run_id !== null, 'to start its step');
    const agentRunId = stepOf(running, 'write').agent_run_id as string;
    const org = session.organization.id as never;
    const approvalId = await eventually(
      async () => {
        const record = await server.service.services.collections.agentRuns.get(org, agentRunId);
        const events = await server.service.services.collections.agentRunEvents.findAll(org, { run_id: agentRunId, type: 'approval_required' });
        return record?.status === 'awaiting_approval' ? (events[0]?.approval_id ?? undefined) : undefined;
      },
      { what: `step run ${agentRunId} to wait for an approval` },
    );
    expect(await actorIds(session)).toContain(agentRunId);
    const parkedBefore = runtime().parkedRuns;
    clock.increment(PARK_AFTER_MS + 10);
    await eventually(() => (runtime().parkedRuns > parkedBefore ? true : undefined), { what: 'the step run to park' });
    return { workflowId: workflow.id as string, runId: run.id as string, agentRunId, approvalId };
  }

  const answer = (session: Session, ids: { workflowId: string; runId: string; approvalId: string }, approved: boolean) =>
    server.request('POST', `/orchestrator/workflows/${ids.workflowId}/runs/${ids.runId}/steps/write/approvals/${ids.approvalId}`, {
      token: session.token,
      body: { approved },
    });

  it('parks the step run; approved over REST, it comes back and the workflow runs its next step', async () => {
    const { session } = await wireOrganization(server, llm);
    llm.script([note('w1', 'from a parked step'), { text: 'noted' }, { text: 'next done' }]);
    const ids = await parkedStep(session, 'parks');
    expect(await actorIds(session)).not.toContain(ids.agentRunId);
    const waiting = await runUntil(server, session, ids.workflowId, ids.runId, () => true);
    expect(waiting.status).toBe('running');
    expect(stepOf(waiting, 'write')).toMatchObject({ status: 'running', agent_run_id: ids.agentRunId });
    expect(stepOf(waiting, 'next').status).toBe('pending');

    const answered = await answer(session, ids, true);
    expect(answered.status).toBe(200);
    expect(answered.body.decision).toBe('approved');
    const run = await runUntil(server, session, ids.workflowId, ids.runId);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'write')).toMatchObject({ status: 'succeeded', output: 'noted', attempts: 1, agent_run_id: ids.agentRunId });
    expect(stepOf(run, 'next')).toMatchObject({ status: 'succeeded', output: 'next done' });
    expect(userTexts(llm.requests.at(-1)?.body ?? null)).toContain('after noted');
    expect(await memories(session)).toBe(1);
    expect((await answer(session, ids, false)).status).toBe(409);
  });

  it('a parked step run survives a restart: approved after it, the step ends and the workflow goes on', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('w2', 'after restart')]);
    const ids = await parkedStep(org.session, 'restarts');

    await server.stop();
    server = await startTestServer(env, { clock, dataDir });
    expect(runtime().parkedRuns).toBe(1);
    const login = await server.request('POST', '/auth/login', { body: { email: org.session.email, password: org.session.password } });
    const session = { ...org.session, token: login.body.token as string };
    const waiting = await runUntil(server, session, ids.workflowId, ids.runId, () => true);
    expect(waiting.status).toBe('running');
    // the step was not started again: it still waits on the same agent run
    expect(stepOf(waiting, 'write')).toMatchObject({ status: 'running', agent_run_id: ids.agentRunId, attempts: 1 });

    llm.script([{ text: 'stored after restart' }, { text: 'next after restart' }]);
    const answered = await answer(session, ids, true);
    expect(answered.status).toBe(200);
    const run = await runUntil(server, session, ids.workflowId, ids.runId);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'write')).toMatchObject({ status: 'succeeded', output: 'stored after restart', attempts: 1, agent_run_id: ids.agentRunId });
    expect(stepOf(run, 'next')).toMatchObject({ status: 'succeeded', output: 'next after restart' });
    expect(await memories(session)).toBe(1);
  });

  it("unanswered, a parked step run's deadline passes after a restart: the step fails (timeout), the workflow fails and its next step is cancelled", async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('w5', 'too late')]);
    const ids = await parkedStep(org.session, 'times-out');
    await server.stop();
    server = await startTestServer(env, { clock, dataDir });
    const login = await server.request('POST', '/auth/login', { body: { email: org.session.email, password: org.session.password } });
    const session = { ...org.session, token: login.body.token as string };
    // past AGENT_RUN_TIMEOUT_SECS (600 s, before the approval's own 900 s): the sweep brings the run back for its deadline
    clock.increment(601_000);
    const run = await runUntil(server, session, ids.workflowId, ids.runId);
    expect(run).toMatchObject({ status: 'failed', reason: 'step_failed' });
    expect(stepOf(run, 'write')).toMatchObject({ status: 'failed', reason: 'timeout', agent_run_id: ids.agentRunId });
    expect(stepOf(run, 'next').status).toBe('cancelled');
    expect(runtime().parkedRuns).toBe(0);
    expect(await memories(session)).toBe(0);
  });

  it('denied, the tool does not run: the model reads the denial, the step ends with its reply and the workflow goes on', async () => {
    const { session } = await wireOrganization(server, llm);
    llm.script([note('w3', 'denied'), { text: 'not noted' }, { text: 'next after denial' }]);
    const ids = await parkedStep(session, 'denies');
    const answered = await answer(session, ids, false);
    expect(answered.body.decision).toBe('denied');
    const run = await runUntil(server, session, ids.workflowId, ids.runId);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'write')).toMatchObject({ status: 'succeeded', output: 'not noted' });
    expect(stepOf(run, 'next')).toMatchObject({ status: 'succeeded', output: 'next after denial' });
    expect(JSON.stringify(llm.requests.at(-2)?.body)).toContain('approval_denied');
    expect(await memories(session)).toBe(0);
  });

  it('a workflow run cancelled while its step run is parked: the step run comes back cancelled, the run ends cancelled', async () => {
    const { session } = await wireOrganization(server, llm);
    llm.script([note('w4', 'cancelled')]);
    const ids = await parkedStep(session, 'cancels');
    const cancel = await server.request('POST', `/orchestrator/workflows/${ids.workflowId}/runs/${ids.runId}/cancel`, { token: session.token });
    expect(cancel.status).toBe(200);
    const run = await runUntil(server, session, ids.workflowId, ids.runId);
    expect(run.status).toBe('cancelled');
    expect(stepOf(run, 'write').status).toBe('cancelled');
    expect(stepOf(run, 'next').status).toBe('cancelled');
    expect(await memories(session)).toBe(0);
  });
});
