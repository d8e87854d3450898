/** Chat over SSE, end to end: the real server, the real LLM clients, the fake LLM over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import { addMember } from '../helpers/members.js';
import type { TestServer } from '../helpers/server.js';
import { names, openStream, send, wireOrganization, type ChatOrg, type SseStream, execute } from '../runtime/chat-helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('chat', () => {
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => ({ server, llm } = await startLlmServer()));
  afterAll(async () => stopLlmServer({ server, llm }));

  const messages = async (org: ChatOrg) =>
    (await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token })).body.messages as any[];

  const approve = (org: ChatOrg, approvalId: string, approved: boolean) =>
    server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, { token: org.session.token, body: { approved } });

  /** the JSON the model was given as the result of its last tool call */
  const lastToolMessage = (requestIndex: number): any => {
    const sent = llm.requests[requestIndex]?.body?.['messages'] as { role: string; content: string }[];
    const tool = sent.filter((message) => message.role === 'tool').at(-1);
    return JSON.parse(tool?.content ?? 'null');
  };

  it('creates, lists and reads conversations with their history', async () => {
    const org = await wireOrganization(server, llm);
    const created = await server.request('POST', '/chat/conversations', { token: org.session.token, body: { title: 'Deploys' } });
    expectStatus(created, 201).toMatchObject({ title: 'Deploys', approval_defaults: { write: 'ask' }, last_message_at: null });
    const list = await server.request('GET', '/chat/conversations?limit=1', { token: org.session.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.items).toHaveLength(1);
    expect(typeof list.body.next_cursor).toBe('string');
    const next = await server.request('GET', `/chat/conversations?limit=1&cursor=${list.body.next_cursor}`, { token: org.session.token });
    expect(next.body.items[0].id).toBe(created.body.id);
    expect(next.body.next_cursor).toBeNull();
    const got = await server.request('GET', `/chat/conversations/${created.body.id}`, { token: org.session.token });
    expect(got.status).toBe(200);
    expect(got.body.messages).toEqual([]);

    for (const body of [{}, { title: '' }, { title: 'x', extra: 1 }, { title: 'x', approval_defaults: { write: 'yes' } }, { title: 'x', agent: 'nope' }]) {
      const bad = await server.request('POST', '/chat/conversations', { token: org.session.token, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    }
  });

  it('streams a text reply with exactly the spec events, ids being the transcript seq', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ text: ['Hel', 'lo'], usage: { input_tokens: 30, output_tokens: 2 } }]);
    const stream = await send(server, org, 'hi');
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'content_delta', 'content_delta', 'message_end']);
    const messageId = stream.headers.get('x-message-id');
    expect(stream.events[0]?.data).toEqual({ message_id: messageId });
    expect(stream.events[1]?.data).toEqual({ delta: 'Hel' });
    expect(stream.events[2]?.data).toEqual({ delta: 'lo' });
    expect(stream.events[3]?.data).toEqual({ finish_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 2 } });
    // seq 2 (the user message) and 5 (the assistant message with its usage and cost) are recorded, not streamed
    expect(stream.events.map((event) => event.id)).toEqual([1, 3, 4, 6]);

    const history = await messages(org);
    expect(history.map((message) => [message.role, message.content, message.status])).toEqual([
      ['user', 'hi', 'complete'],
      ['assistant', 'Hello', 'complete'],
    ]);
    expect(history[1]).toMatchObject({ id: messageId, finish_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 2 }, error: null });

    // the next message carries the history to the model
    llm.script([{ text: 'again' }]);
    await (
      await send(server, org, 'and again')
    ).ended;
    const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
    expect(sent.slice(1).map((message) => [message.role, message.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello'],
      ['user', 'and again'],
    ]);
    expect(sent[0]?.role).toBe('system');
    const tools = (llm.requests.at(-1)?.body?.['tools'] as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(tools).toEqual(['search_connector_tools', 'execute_connector_tool']);
  });

  it('searches, then stores and recalls memory through execute_connector_tool', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    llm.script([
      { tool_calls: [{ id: 'call_s', name: 'search_connector_tools', arguments: { query: 'store memory' } }] },
      { tool_calls: [{ id: 'call_w', ...execute('memory.store', { kind: 'fact', realm: 'default', text: 'Deploys happen on Tuesday' }) }] },
      { tool_calls: [{ id: 'call_r', ...execute('memory.recall', { query: 'deploys' }) }] },
      { text: 'Deploys happen on Tuesday.' },
    ]);
    const stream = await send(server, org, 'remember that deploys happen on Tuesday');
    await stream.ended;
    expect(names(stream.events)).toEqual([
      'message_start',
      'tool_call_start',
      'tool_result',
      'tool_call_start',
      'tool_result',
      'tool_call_start',
      'tool_result',
      'content_delta',
      'message_end',
    ]);
    const starts = stream.events.filter((event) => event.event === 'tool_call_start').map((event) => event.data);
    expect(starts).toEqual([
      { tool_call_id: 'call_s', name: 'search_connector_tools', connector: null },
      { tool_call_id: 'call_w', name: 'execute_connector_tool', connector: 'memory' },
      { tool_call_id: 'call_r', name: 'execute_connector_tool', connector: 'memory' },
    ]);
    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => event.data);
    expect(results[0]?.tool_call_id).toBe('call_s');
    const found = results[0]?.result.result.tools.map((tool: { name: string; effect: string }) => `${tool.name}:${tool.effect}`);
    expect(found).toContain('memory.store:write');
    expect(results[1]?.result.result).toMatchObject({ kind: 'fact', realm: 'default', text: 'Deploys happen on Tuesday' });
    expect(results[2]?.result.result.items.map((item: { text: string }) => item.text)).toEqual(['Deploys happen on Tuesday']);

    const stored = await server.request('GET', '/memory', { token: org.session.token });
    expect(stored.body.items.map((entry: { text: string; created_by: string }) => [entry.text, entry.created_by])).toEqual([
      ['Deploys happen on Tuesday', org.session.user.id],
    ]);
    // the model got each result as a tool message
    expect(lastToolMessage(llm.requests.length - 1).result.items[0].text).toBe('Deploys happen on Tuesday');
  });

  it('returns tool errors to the model as results, never failing the run', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    llm.script([
      {
        tool_calls: [
          { id: 'c1', ...execute('memory.nope', {}) },
          { id: 'c2', ...execute('memory.store', { kind: 'fact' }) },
          { id: 'c3', name: 'rm_rf', arguments: {} },
        ],
      },
      { text: 'sorry' },
    ]);
    const stream = await send(server, org, 'break things');
    await stream.ended;
    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => [event.data.tool_call_id, event.data.result.error.code]);
    expect(results).toEqual([
      ['c1', 'unknown_tool'],
      ['c2', 'invalid_arguments'],
      ['c3', 'unknown_tool'],
    ]);
    expect(stream.events.at(-1)?.data.finish_reason).toBe('end_turn');
  });

  it('waits for approval of a write tool; approved, the tool runs and tool_result follows', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ tool_calls: [{ id: 'w1', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'approved note' }) }] }, { text: 'done' }]);
    const stream = await send(server, org, 'note it');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(Object.keys(required.data).sort()).toEqual(['approval_id', 'args', 'tool']);
    expect(required.data.tool).toBe('memory.store');
    expect(required.data.args).toEqual({ kind: 'note', realm: 'default', text: 'approved note', importance: 0.5 });
    // nothing stored yet
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.total).toBe(0);

    const answer = await approve(org, required.data.approval_id, true);
    expectStatus(answer, 200).toEqual({ approval_id: required.data.approval_id, approved: true, decision: 'approved' });
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'tool_call_start', 'approval_required', 'tool_result', 'content_delta', 'message_end']);
    expect(stream.events[3]?.data.result.result.text).toBe('approved note');
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.total).toBe(1);
    // answered twice: 409
    const again = await approve(org, required.data.approval_id, false);
    expectError(again, 409, 'conflict');
    expect(again.body.error.details.decision).toBe('approved');
  });

  it('denied: the tool does not run and the model gets approval_denied', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([
      { tool_calls: [{ id: 'w2', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'denied note' }) }] },
      { text: 'ok, not stored' },
    ]);
    const stream = await send(server, org, 'note it');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect((await approve(org, required.data.approval_id, false)).body.decision).toBe('denied');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result');
    expect(result?.data.result.error.code).toBe('approval_denied');
    expect(lastToolMessage(llm.requests.length - 1).error.code).toBe('approval_denied');
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.total).toBe(0);
    expect(stream.events.at(-1)?.data.finish_reason).toBe('end_turn');
  });

  it('no answer within approval_timeout_secs: approval_timeout, treated as denied', async () => {
    const org = await wireOrganization(server, llm, { approvalTimeoutSecs: 1 });
    llm.script([{ tool_calls: [{ id: 'w3', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'late' }) }] }, { text: 'timed out' }]);
    const stream = await send(server, org, 'note it');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    await stream.ended;
    expect(stream.events.find((event) => event.event === 'tool_result')?.data.result.error.code).toBe('approval_timeout');
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.total).toBe(0);
    const late = await approve(org, required.data.approval_id, true);
    expect(late.status).toBe(409);
    expect(late.body.error.details.decision).toBe('timeout');
    const unknown = await approve(org, 'apr_nope', true);
    expectError(unknown, 404, 'not_found');
  });

  it('cancels mid-run: the loop stops after the current step and the reply ends as cancelled', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ text: ['thinking', ' more'], hold_after_chunks: 1, tool_calls: [{ id: 'never', ...execute('memory.recall', { query: 'x' }) }] }]);
    const stream = await send(server, org, 'long task');
    await llm.whenHeld();
    const messageId = stream.headers.get('x-message-id');
    const cancel = await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${messageId}/cancel`, { token: org.session.token });
    expect(cancel.status).toBe(202);
    expect(cancel.body.status).toBe('cancelling');
    llm.release();
    await stream.ended;
    // the turn in flight finished, its tool call never ran
    expect(names(stream.events)).toEqual(['message_start', 'content_delta', 'content_delta', 'message_end']);
    expect(stream.events.at(-1)?.data).toEqual({ finish_reason: 'cancelled', usage: { input_tokens: 10, output_tokens: 20 } });
    const reply = (await messages(org))[1];
    expect(reply).toMatchObject({ status: 'cancelled', content: 'thinking more', finish_reason: 'cancelled' });
    const again = await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${messageId}/cancel`, { token: org.session.token });
    expect(again.status).toBe(409);
    expect(again.body.error.details.status).toBe('cancelled');
  });

  it('cancels a run waiting for an approval at once', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ tool_calls: [{ id: 'w4', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'x' }) }] }]);
    const stream = await send(server, org, 'note');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    const messageId = stream.headers.get('x-message-id');
    expect((await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${messageId}/cancel`, { token: org.session.token })).status).toBe(
      202,
    );
    await stream.ended;
    expect(stream.events.at(-1)?.data.finish_reason).toBe('cancelled');
    expect((await approve(org, required.data.approval_id, true)).body.error.details.decision).toBe('cancelled');
  });

  it('retries a provider 500 and succeeds', async () => {
    const org = await wireOrganization(server, llm);
    const before = llm.requests.length;
    llm.script([{ status: 500 }, { text: 'recovered' }]);
    const stream = await send(server, org, 'hi');
    await stream.ended;
    expect(llm.requests.slice(before).map((request) => request.status)).toEqual([500, 200]);
    expect(names(stream.events)).toEqual(['message_start', 'content_delta', 'message_end']);
    expect(stream.events[1]?.data.delta).toBe('recovered');
  });

  it('a provider error fails the run: error event then message_end', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ status: 400 }]);
    const stream = await send(server, org, 'hi');
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'error', 'message_end']);
    expect(stream.events[1]?.data.code).toBe('llm_provider_error');
    expect(typeof stream.events[1]?.data.message).toBe('string');
    expect(stream.events[2]?.data).toEqual({ finish_reason: 'error', usage: { input_tokens: 0, output_tokens: 0 } });
    expect((await messages(org))[1]).toMatchObject({ status: 'failed', error: { code: 'llm_provider_error' } });
  });

  it('a client that disconnects does not stop the run, and reconnects with Last-Event-ID', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ text: ['one ', 'two ', 'three'], hold_after_chunks: 1 }]);
    const first = await send(server, org, 'count');
    const one = await first.waitFor((event) => event.event === 'content_delta');
    const messageId = first.headers.get('x-message-id');
    first.close();
    await first.ended;
    const path = `/chat/conversations/${org.conversationId}/messages/${messageId}/events`;

    // live: the rest of the reply, after the last event seen
    const live = await openStream(server.url, 'GET', path, { token: org.session.token, headers: { 'last-event-id': String(one.id) } });
    expect(live.status).toBe(200);
    llm.release();
    await live.ended;
    expect(live.events.map((event) => event.data.delta ?? event.event)).toEqual(['two ', 'three', 'message_end']);
    expect(live.events[0]?.id).toBe(one.id + 1);

    // finished: replayed from the stored transcript
    const replay = await openStream(server.url, 'GET', `${path}?last_event_id=0`, { token: org.session.token });
    await replay.ended;
    expect(names(replay.events)).toEqual(['message_start', 'content_delta', 'content_delta', 'content_delta', 'message_end']);
    expect(replay.events.map((event) => event.data)).toEqual([
      { message_id: messageId },
      { delta: 'one ' },
      { delta: 'two ' },
      { delta: 'three' },
      { finish_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 20 } },
    ]);
    const bad = await server.request('GET', path, { token: org.session.token, headers: { 'last-event-id': 'abc' } });
    expectError(bad, 400, 'validation_error');
    expect((await messages(org))[1]).toMatchObject({ status: 'complete', content: 'one two three' });
  });

  it('one reply at a time per conversation (409 while one is written)', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ text: ['a', 'b'], hold_after_chunks: 1 }]);
    const first = await send(server, org, 'first');
    await llm.whenHeld();
    const second = await server.request('POST', `/chat/conversations/${org.conversationId}/messages`, {
      token: org.session.token,
      body: { content: 'second' },
    });
    expectError(second, 409, 'conflict');
    llm.release();
    await first.ended;
  });

  it('speaks the Anthropic messages API too, tool calls included', async () => {
    const org = await wireOrganization(server, llm, { provider: 'anthropic', approvalWrite: 'allow' });
    llm.script([{ tool_calls: [{ id: 'toolu_a', ...execute('memory.recall', { query: 'anything' }) }] }, { text: ['fine'] }]);
    const stream = await send(server, org, 'recall');
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'tool_call_start', 'tool_result', 'content_delta', 'message_end']);
    expect(stream.events[2]?.data).toEqual({ tool_call_id: 'toolu_a', result: { result: { items: [] } } });
    expect(llm.requests.at(-1)?.path).toBe('/v1/messages');
  });

  it('fails with max_turns when the agent allows fewer turns than the model takes', async () => {
    const org = await wireOrganization(server, llm);
    const agent = await server.request('POST', '/agents', {
      token: org.session.token,
      body: { agent_type: 'assistant', name: 'one-turn', config: { max_turns: 1 } },
    });
    expect(agent.status).toBe(201);
    const conversation = await server.request('POST', '/chat/conversations', { token: org.session.token, body: { title: 'short', agent: 'one-turn' } });
    expect(conversation.body.agent_id).toBe(agent.body.id);
    llm.script([{ tool_calls: [{ id: 's1', name: 'search_connector_tools', arguments: { query: '' } }] }]);
    const stream = await send(server, org, 'go', conversation.body.id);
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'error', 'message_end']);
    expect(stream.events[1]?.data.code).toBe('max_turns');
  });

  it('answers 422 llm_unconfigured when no model is configured', async () => {
    const session = await server.register();
    const conversation = await server.request('POST', '/chat/conversations', { token: session.token, body: { title: 'no llm' } });
    const response = await server.request('POST', `/chat/conversations/${conversation.body.id}/messages`, { token: session.token, body: { content: 'hi' } });
    expectError(response, 422, 'llm_unconfigured');
    expect(response.body.error.message).toContain('llm_provider');
  });

  it('validates message bodies and approval answers', async () => {
    const org = await wireOrganization(server, llm);
    for (const body of [{}, { content: '' }, { content: 'x', extra: true }]) {
      const response = await server.request('POST', `/chat/conversations/${org.conversationId}/messages`, { token: org.session.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    const approval = await server.request('POST', `/chat/conversations/${org.conversationId}/approvals/apr_x`, {
      token: org.session.token,
      body: { approved: 'yes' },
    });
    expectError(approval, 400, 'validation_error');
  });

  it('needs chat:use; GET /runtime/actors is for owners and admins', async () => {
    const org = await wireOrganization(server, llm);
    const viewer = await addMember(server, org.session, 'viewer');
    const member = await addMember(server, org.session, 'member');
    const denied = await server.request('POST', '/chat/conversations', { token: viewer.token, body: { title: 'x' } });
    expectError(denied, 403, 'forbidden');
    expect((await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: member.token })).status).toBe(200);

    llm.script([{ text: ['a', 'b'], hold_after_chunks: 1 }]);
    const stream = await send(server, org, 'hold');
    await llm.whenHeld();
    const actors = await server.request('GET', '/runtime/actors', { token: org.session.token });
    expect(actors.status).toBe(200);
    expect(actors.body.total).toBe(1);
    expect(actors.body.items[0]).toMatchObject({ kind: 'agent_run', state: 'running', status: 'running', parent: null, restarts: 0 });
    const runId = stream.headers.get('x-run-id');
    expect(actors.body.items[0].id).toBe(runId);
    const admin = await addMember(server, org.session, 'admin');
    expect((await server.request('GET', '/runtime/actors', { token: admin.token })).body.total).toBe(1);
    const forbidden = await server.request('GET', '/runtime/actors', { token: member.token });
    expectError(forbidden, 403, 'forbidden');
    // another organization sees none of them
    const other = await server.register();
    expect((await server.request('GET', '/runtime/actors', { token: other.token })).body.total).toBe(0);
    llm.release();
    await stream.ended;
    expect((await server.request('GET', '/runtime/actors', { token: org.session.token })).body.total).toBe(0);
  });

  it("hides another organization's conversations: 404 on every verb", async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ tool_calls: [{ id: 'w5', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'x' }) }] }, { text: 'ok' }]);
    const stream: SseStream = await send(server, org, 'note');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    const messageId = stream.headers.get('x-message-id');
    const intruder = await wireOrganization(server, llm);
    const base = `/chat/conversations/${org.conversationId}`;
    const token = intruder.session.token;
    const attempts = [
      await server.request('GET', base, { token }),
      await server.request('GET', `${base}/messages`, { token }),
      await server.request('POST', `${base}/messages`, { token, body: { content: 'hi' } }),
      await server.request('GET', `${base}/messages/${messageId}/events`, { token }),
      await server.request('POST', `${base}/messages/${messageId}/cancel`, { token }),
      await server.request('POST', `${base}/approvals/${required.data.approval_id}`, { token, body: { approved: true } }),
      // their own conversation, our approval and message
      await server.request('POST', `/chat/conversations/${intruder.conversationId}/approvals/${required.data.approval_id}`, {
        token,
        body: { approved: true },
      }),
      await server.request('POST', `/chat/conversations/${intruder.conversationId}/messages/${messageId}/cancel`, { token }),
    ];
    expect(attempts.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404, 404, 404]);
    expect(attempts.every((response) => response.body.error.code === 'not_found')).toBe(true);
    expect((await server.request('GET', '/chat/conversations', { token })).body.items.map((c: { id: string }) => c.id)).toEqual([intruder.conversationId]);
    // the run was untouched
    expect((await approve(org, required.data.approval_id, false)).status).toBe(200);
    await stream.ended;
  });
});
