/**
 * Parked pipeline agent runs (runtime/agent/parking.ts, the `pipeline_agent`
 * resumer in domains/pipelines/agent-runs.ts): an agent run inside a pipeline
 * run, idle in an approval wait for AGENT_PARK_AFTER_MS, is persisted and its
 * actor stopped; the approval answered with the pipeline token brings it
 * back, also after a restart: its record gets its output, its steps are
 * mirrored into the pipeline run's log once (none twice) and the last
 * progress entry names its end. The simulated runtime clock passes the idle
 * period.
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

const PARK_AFTER_MS = 1000;

type Entry = { kind: string; level: string; phase: string | null; message: string | null; fraction: number | null };

describe('parked pipeline agent runs', () => {
  const clock = simulatedClock('2026-11-25T10:00:00.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-pipeline-agents-'));
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
  const memories = async (session: Session) => (await server.request('GET', '/memory', { token: session.token })).body.total as number;
  const entries = async (session: Session, pipelineId: string, runId: string): Promise<Entry[]> =>
    (await server.request('GET', `/pipelines/${pipelineId}/runs/${runId}/entries`, { token: session.token })).body.items as Entry[];

  /** a pipeline run whose agent run asks to store a note; resolves once the agent run is parked */
  async function parkedAgentRun(session: Session) {
    const pipeline = await server.request('POST', '/pipelines', { token: session.token, body: { name: `pp-${Math.random().toString(36).slice(2, 8)}` } });
    const started = await server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: session.token, body: {} });
    const token = started.body.token as string;
    const agentRun = await server.request('POST', '/pipeline-agent/runs', { token, body: { instruction: 'note it' } });
    expect(agentRun.status).toBe(201);
    const id = agentRun.body.id as string;
    const org = session.organization.id as never;
    const approvalId = await eventually(
      async () => {
        const record = await server.service.services.collections.agentRuns.get(org, id);
        const events = await server.service.services.collections.agentRunEvents.findAll(org, { run_id: id, type: 'approval_required' });
        return record?.status === 'awaiting_approval' ? (events[0]?.approval_id ?? undefined) : undefined;
      },
      { what: `agent run ${id} to wait for an approval` },
    );
    const parkedBefore = runtime().parkedRuns;
    clock.increment(PARK_AFTER_MS + 10);
    await eventually(() => (runtime().parkedRuns > parkedBefore ? true : undefined), { what: 'the agent run to park' });
    return { pipelineId: pipeline.body.id as string, runId: started.body.run.id as string, token, id, approvalId };
  }

  const approve = (token: string, id: string, approvalId: string) =>
    server.request('POST', `/pipeline-agent/runs/${id}/approvals/${approvalId}`, { token, body: { approved: true } });

  const succeeded = (token: string, id: string) =>
    eventually(
      async () => {
        const read = await server.request('GET', `/pipeline-agent/runs/${id}`, { token });
        return read.body.status === 'succeeded' ? read.body : undefined;
      },
      { what: `agent run ${id} to succeed` },
    );

  /** the log and progress the run mirrored: each step once, the end last */
  async function expectMirrored(session: Session, ids: { pipelineId: string; runId: string; id: string }, reply: string) {
    const items = await eventually(async () => {
      const found = await entries(session, ids.pipelineId, ids.runId);
      return found.some((entry) => entry.kind === 'progress' && entry.fraction === 1) ? found : undefined;
    });
    const logs = items.filter((entry) => entry.kind !== 'progress').map((entry) => entry.message ?? '');
    expect(logs.filter((message) => message.startsWith('tool call '))).toHaveLength(1);
    expect(logs.filter((message) => message.includes('waits for an approval'))).toHaveLength(1);
    expect(logs.filter((message) => message.startsWith('tool result ') && message.endsWith(': ok'))).toHaveLength(1);
    expect(logs.filter((message) => message === reply)).toHaveLength(1);
    expect(items.at(-1)).toMatchObject({ kind: 'progress', fraction: 1, message: `agent run ${ids.id} succeeded` });
  }

  it('parks the agent run; approved with the pipeline token, it comes back, stores its output and is mirrored on', async () => {
    const { session } = await wireOrganization(server, llm);
    llm.script([note('p1', 'from a parked pipeline agent'), { text: 'noted by the pipeline' }]);
    const ids = await parkedAgentRun(session);
    expect((await server.request('GET', `/pipeline-agent/runs/${ids.id}`, { token: ids.token })).body.status).toBe('awaiting_approval');

    const answer = await approve(ids.token, ids.id, ids.approvalId);
    expect(answer.status).toBe(200);
    expect(answer.body.decision).toBe('approved');
    expect(await succeeded(ids.token, ids.id)).toMatchObject({ output: 'noted by the pipeline' });
    expect(await memories(session)).toBe(1);
    await expectMirrored(session, ids, 'noted by the pipeline');
  });

  it('a parked agent run survives a restart: approved after it with the pipeline token, it ends and its pipeline run shows it', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('p2', 'after restart')]);
    const ids = await parkedAgentRun(org.session);

    await server.stop();
    server = await startTestServer(env, { clock, dataDir });
    expect(runtime().parkedRuns).toBe(1);
    const login = await server.request('POST', '/auth/login', { body: { email: org.session.email, password: org.session.password } });
    const session = { ...org.session, token: login.body.token as string };

    llm.script([{ text: 'noted after restart' }]);
    const answer = await approve(ids.token, ids.id, ids.approvalId);
    expect(answer.status).toBe(200);
    expect(await succeeded(ids.token, ids.id)).toMatchObject({ output: 'noted after restart' });
    expect(await memories(session)).toBe(1);
    await expectMirrored(session, ids, 'noted after restart');
  });

  it("a parked agent run is cancelled with its pipeline run's end", async () => {
    const { session } = await wireOrganization(server, llm);
    llm.script([note('p3', 'never')]);
    const ids = await parkedAgentRun(session);
    const finish = await server.request('POST', `/pipelines/${ids.pipelineId}/runs/${ids.runId}/finish`, {
      token: session.token,
      body: { status: 'succeeded' },
    });
    expect(finish.status).toBe(200);
    await eventually(async () => {
      const read = await server.request('GET', `/pipeline-agent/runs/${ids.id}`, { token: session.token });
      return read.body.status === 'cancelled' ? true : undefined;
    });
    expect(await memories(session)).toBe(0);
  });
});
