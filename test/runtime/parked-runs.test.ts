/**
 * Parked runs (runtime/agent/parking.ts): a chat run idle in an approval wait
 * for AGENT_PARK_AFTER_MS is persisted and its actor stopped; an answer, a
 * cancel or the approval deadline brings it back, also after a restart.
 * The simulated runtime clock passes the idle period.
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
import { decide, execute, names, openStream, send, wireOrganization, type ChatOrg } from './chat-helpers.js';

const PARK_AFTER_MS = 1000;

describe('parked runs', () => {
  const clock = simulatedClock('2026-11-24T10:00:00.000Z');
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-'));
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
  const reply = async (org: ChatOrg) =>
    (await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token })).body.messages[1] as Record<string, unknown>;

  /** starts a reply that asks for an approval, passes the idle period and waits until its actor is gone */
  async function parkedReply(org: ChatOrg, text: string, keepStream = false) {
    const stream = await send(server, org, `note ${text}`);
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    const runId = stream.headers.get('x-run-id') ?? (await reply(org))['run_id'];
    if (!keepStream) stream.close();
    const parkedBefore = runtime().parkedRuns;
    clock.increment(PARK_AFTER_MS + 10);
    await eventually(() => (runtime().parkedRuns > parkedBefore ? true : undefined), { what: 'the run to park' });
    return { stream, approvalId: required.data.approval_id as string, runId: runId as string };
  }

  const actorIds = async (org: ChatOrg) =>
    ((await server.request('GET', '/runtime/actors', { token: org.session.token })).body.items as { id: string }[]).map((actor) => actor.id);

  it('parks an idle approval wait; approved, it comes back, runs the tool and finishes (the open stream sees it all)', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('p1', 'parked note'), { text: 'stored' }]);
    const { stream, approvalId, runId } = await parkedReply(org, 'a', true);
    expect(await actorIds(org)).not.toContain(runId);
    // a reconnecting client gets the transcript of the parked run
    const messageId = stream.headers.get('x-message-id');
    const again = await openStream(server.url, 'GET', `/chat/conversations/${org.conversationId}/messages/${messageId}/events`, { token: org.session.token });
    await again.waitFor((event) => event.event === 'approval_required');

    const answer = await decide(server, org, approvalId, true);
    expect(answer.status).toBe(200);
    expect(answer.body.decision).toBe('approved');
    await stream.ended;
    await again.ended;
    expect(names(stream.events)).toEqual(['message_start', 'tool_call_start', 'approval_required', 'tool_result', 'content_delta', 'message_end']);
    expect(names(again.events)).toEqual(names(stream.events));
    expect(stream.events[3]?.data.result.result.text).toBe('parked note');
    // the transcript's seq goes on where the parked run left it
    const ids = stream.events.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(again.events.map((event) => event.id)).toEqual(ids);
    expect(await memories(org)).toBe(1);
    await eventually(async () => ((await reply(org))['status'] === 'complete' ? true : undefined), { what: 'the reply to complete' });
    expect(await reply(org)).toMatchObject({ content: 'stored', finish_reason: 'end_turn' });
    // answered twice: 409
    expect((await decide(server, org, approvalId, false)).status).toBe(409);
  });

  it('denied while parked: the model gets approval_denied', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('p2', 'denied'), { text: 'not stored' }]);
    const { approvalId } = await parkedReply(org, 'b');
    expect((await decide(server, org, approvalId, false)).body.decision).toBe('denied');
    await eventually(async () => ((await reply(org))['status'] === 'complete' ? true : undefined), { what: 'the reply to complete' });
    expect(await memories(org)).toBe(0);
    const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
    expect(JSON.parse(sent.filter((message) => message.role === 'tool').at(-1)?.content ?? 'null').error.code).toBe('approval_denied');
  });

  it('cancelled while parked: the reply ends as cancelled', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([note('p3', 'cancelled')]);
    const { approvalId } = await parkedReply(org, 'c');
    const message = await reply(org);
    const cancel = await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${String(message['id'])}/cancel`, {
      token: org.session.token,
    });
    expect(cancel.status).toBe(202);
    await eventually(async () => ((await reply(org))['status'] === 'cancelled' ? true : undefined), { what: 'the reply to be cancelled' });
    expect((await decide(server, org, approvalId, true)).body.error.details.decision).toBe('cancelled');
  });

  it('the approval deadline passes while parked: approval_timeout, treated as denied', async () => {
    const org = await wireOrganization(server, llm, { approvalTimeoutSecs: 60 });
    llm.script([note('p4', 'late'), { text: 'timed out' }]);
    const { approvalId } = await parkedReply(org, 'd');
    clock.increment(60_000);
    await eventually(async () => ((await reply(org))['status'] === 'complete' ? true : undefined), { what: 'the reply to complete' });
    expect(await memories(org)).toBe(0);
    const late = await decide(server, org, approvalId, true);
    expect(late.status).toBe(409);
    expect(late.body.error.details.decision).toBe('timeout');
  });

  it('another organization cannot answer it (404), and it survives a restart to be answered after it', async () => {
    const org = await wireOrganization(server, llm);
    const other = await wireOrganization(server, llm);
    llm.script([note('p5', 'after restart'), { text: 'stored after restart' }]);
    const { approvalId } = await parkedReply(org, 'e');
    const stranger = await server.request('POST', `/chat/conversations/${other.conversationId}/approvals/${approvalId}`, {
      token: other.session.token,
      body: { approved: true },
    });
    expect(stranger.status).toBe(404);
    const foreign = await server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, {
      token: other.session.token,
      body: { approved: true },
    });
    expect(foreign.status).toBe(404);

    await server.stop();
    server = await startTestServer(env, { clock, dataDir });
    expect(runtime().parkedRuns).toBe(1);
    expect(await reply(org)).toMatchObject({ status: 'streaming' });
    const answer = await decide(server, org, approvalId, true);
    expect(answer.status).toBe(200);
    await eventually(async () => ((await reply(org))['status'] === 'complete' ? true : undefined), { what: 'the reply to complete' });
    expect(await reply(org)).toMatchObject({ content: 'stored after restart' });
    expect(await memories(org)).toBe(1);
  });
});
