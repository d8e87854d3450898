/** Chat tool calls as a resource: on each reply in the message list, and at /chat/conversations/:id/tool-calls. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { execute, names, send, wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('chat tool calls', () => {
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => ({ server, llm } = await startLlmServer()));
  afterAll(async () => stopLlmServer({ server, llm }));

  const toolCalls = (org: ChatOrg, query = '', conversationId = org.conversationId) =>
    server.request('GET', `/chat/conversations/${conversationId}/tool-calls${query}`, { token: org.session.token });
  const approve = (org: ChatOrg, approvalId: string, approved: boolean) =>
    server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, { token: org.session.token, body: { approved } });
  /** the tool calls once the transcript holds `count` finished ones (the transcript is written behind the stream) */
  const finished = (org: ChatOrg, count: number) =>
    eventually(
      async () => {
        const answer = await toolCalls(org, '?limit=200');
        const done = (answer.body.items as any[]).filter((call) => call.finished_at !== null);
        return done.length >= count ? (answer.body.items as any[]) : undefined;
      },
      { what: `${count} finished tool calls` },
    );

  /** one reply: a meta-tool search, a read, a failing call and a write that waits for the approval we answer */
  async function conversationWithApproval(approved: boolean): Promise<{ org: ChatOrg; approvalId: string; messageId: string; runId: string }> {
    const org = await wireOrganization(server, llm);
    llm.script([
      {
        tool_calls: [
          { id: 'c_search', name: 'search_connector_tools', arguments: { query: 'memory' } },
          { id: 'c_read', ...execute('memory.recall', { query: 'deploys' }) },
          { id: 'c_bad', ...execute('memory.nope', {}) },
          { id: 'c_write', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'deploys on Tuesday' }) },
        ],
      },
      { text: approved ? 'stored' : 'not stored' },
    ]);
    const stream = await send(server, org, 'remember deploys');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    const messageId = stream.headers.get('x-message-id') as string;
    const runId = stream.headers.get('x-run-id') as string;

    // while it waits, the call shows as pending_approval with what will run
    const pending = await eventually(
      async () => {
        const answer = await toolCalls(org);
        return (answer.body.items as any[]).find((call) => call.status === 'pending_approval');
      },
      { what: 'a pending call' },
    );
    expect(pending).toMatchObject({
      tool_call_id: 'c_write',
      tool: 'memory.store',
      approval_id: required.data.approval_id,
      finished_at: null,
      arguments: { kind: 'note', realm: 'default', text: 'deploys on Tuesday' },
      message_id: messageId,
      run_id: runId,
    });
    expect((await toolCalls(org, '?status=pending_approval')).body.total).toBe(1);

    expect((await approve(org, required.data.approval_id, approved)).status).toBe(200);
    await stream.ended;
    expect(names(stream.events).at(-1)).toBe('message_end');
    return { org, approvalId: required.data.approval_id, messageId, runId };
  }

  it("lists a reply's calls in order: meta-tool, read, failed, and an approved write that succeeded", async () => {
    const { org, approvalId, messageId, runId } = await conversationWithApproval(true);
    const calls = await finished(org, 4);
    expect(calls.map((call) => [call.tool_call_id, call.name, call.tool, call.status])).toEqual([
      ['c_search', 'search_connector_tools', 'search_connector_tools', 'succeeded'],
      ['c_read', 'execute_connector_tool', 'memory.recall', 'succeeded'],
      ['c_bad', 'execute_connector_tool', 'memory.nope', 'failed'],
      ['c_write', 'execute_connector_tool', 'memory.store', 'succeeded'],
    ]);
    const [search, read, bad, write] = calls;
    expect(search.arguments).toEqual({ query: 'memory' });
    expect(search.result.tools.map((tool: any) => tool.name)).toContain('memory.store');
    expect(read).toMatchObject({
      arguments: { query: 'deploys' },
      error: null,
      approval_id: null,
      approval_decision: null,
      message_id: messageId,
      run_id: runId,
    });
    expect(read.result).toEqual(expect.objectContaining({ items: [] }));
    expect(bad.error.code).toBe('unknown_tool');
    expect(bad.result).toBeNull();
    expect(write).toMatchObject({
      approval_id: approvalId,
      approval_decision: 'approved',
      decided_by: org.session.user.id,
      error: null,
      result: { kind: 'note', realm: 'default', text: 'deploys on Tuesday' },
    });
    for (const call of calls) {
      expect(call.id).toMatch(/^tc_[0-9a-z]+_\d{8}$/);
      expect(Date.parse(call.finished_at)).toBeGreaterThanOrEqual(Date.parse(call.started_at));
    }

    // the same calls ride on the reply in the message list; the user's message has none
    const messages = await server.request('GET', `/chat/conversations/${org.conversationId}/messages`, { token: org.session.token });
    expect(messages.status).toBe(200);
    expect(messages.body.items.map((message: any) => [message.role, message.tool_calls.length])).toEqual([
      ['user', 0],
      ['assistant', 4],
    ]);
    expect(messages.body.items[1].tool_calls).toEqual(calls);
    const conversation = await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token });
    expect(conversation.body.messages[1].tool_calls).toEqual(calls);

    // one by id
    const one = await server.request('GET', `/chat/conversations/${org.conversationId}/tool-calls/${write.id}`, { token: org.session.token });
    expectStatus(one, 200).toEqual(write);
  });

  it('a denied write is denied with approval_denied, and the tool never ran', async () => {
    const { org, approvalId } = await conversationWithApproval(false);
    const calls = await finished(org, 4);
    const write = calls.find((call) => call.tool_call_id === 'c_write');
    expect(write).toMatchObject({ status: 'denied', approval_id: approvalId, approval_decision: 'denied', result: null });
    expect(write.error.code).toBe('approval_denied');
    expect((await server.request('GET', '/memory', { token: org.session.token })).body.total).toBe(0);
    expect((await toolCalls(org, '?status=denied')).body.items.map((call: any) => call.tool_call_id)).toEqual(['c_write']);
    expect((await toolCalls(org, '?status=succeeded')).body.total).toBe(2);
    expect((await toolCalls(org, '?status=bogus')).status).toBe(400);
  });

  it('a call whose run was cancelled while it waited ends denied with cancelled', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ tool_calls: [{ id: 'c_cancel', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'x' }) }] }]);
    const stream = await send(server, org, 'note');
    await stream.waitFor((event) => event.event === 'approval_required');
    const messageId = stream.headers.get('x-message-id') as string;
    const cancel = await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${messageId}/cancel`, { token: org.session.token });
    expect(cancel.status).toBe(202);
    await stream.ended;
    const [call] = await finished(org, 1);
    expect(call).toMatchObject({ tool_call_id: 'c_cancel', status: 'denied', approval_decision: 'cancelled' });
    expect(call.error.code).toBe('cancelled');
  });

  it('pages across replies with the shared cursor', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    for (const [index, query] of ['one', 'two'].entries()) {
      llm.script([
        {
          tool_calls: [
            { id: `r${index}a`, ...execute('memory.recall', { query }) },
            { id: `r${index}b`, ...execute('memory.recall', { query }) },
          ],
        },
        { text: 'ok' },
      ]);
      await (
        await send(server, org, query)
      ).ended;
    }
    await finished(org, 4);
    const first = await toolCalls(org, '?limit=3');
    expect(first.body.total).toBe(4);
    expect(first.body.items.map((call: any) => call.tool_call_id)).toEqual(['r0a', 'r0b', 'r1a']);
    const second = await toolCalls(org, `?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((call: any) => call.tool_call_id)).toEqual(['r1b']);
    expect(second.body.next_cursor).toBeNull();
    expect((await toolCalls(org, '?cursor=forged')).body.error.code).toBe('invalid_cursor');
  });

  it('another organization, another conversation and ids we never issued are 404', async () => {
    const owner = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    llm.script([{ tool_calls: [{ id: 'p1', ...execute('memory.recall', { query: 'private' }) }] }, { text: 'ok' }]);
    await (
      await send(server, owner, 'private')
    ).ended;
    const [call] = await finished(owner, 1);

    const stranger = await wireOrganization(server, llm);
    for (const path of [`/chat/conversations/${owner.conversationId}/tool-calls`, `/chat/conversations/${owner.conversationId}/tool-calls/${call.id}`]) {
      const answer = await server.request('GET', path, { token: stranger.session.token });
      expectError(answer, 404, 'not_found');
    }
    // the stranger's own conversation does not reach the owner's call either
    expect((await toolCalls(stranger, `/${call.id}`)).status).toBe(404);
    expect((await toolCalls(stranger)).body.total).toBe(0);

    // the owner's other conversation does not show it
    const other = await server.request('POST', '/chat/conversations', { token: owner.session.token, body: { title: 'other' } });
    expect((await toolCalls(owner, `/${call.id}`, other.body.id)).status).toBe(404);
    expect((await toolCalls(owner, '', other.body.id)).body.total).toBe(0);

    const [, ulid] = /^tc_([0-9a-z]+)_\d{8}$/.exec(call.id) as RegExpExecArray;
    for (const forged of ['nope', `tc_${ulid}_00000099`, `tc_${ulid}_1`, `tc_../${ulid}_00000001`, 'tc__00000001']) {
      const answer = await toolCalls(owner, `/${encodeURIComponent(forged)}`);
      expectError(answer, 404, 'not_found');
    }
    expect((await toolCalls(owner, `/${call.id}`)).status).toBe(200);
  });

  it('documents the routes and the tool_calls of messages in /openapi.json', async () => {
    const paths = (await server.request('GET', '/openapi.json')).body.paths;
    const item = paths['/api/v1/chat/conversations/{id}/tool-calls'].get.responses['200'].content['application/json'].schema.properties.items.items;
    expect(item.properties.status.enum).toEqual(['running', 'pending_approval', 'approved', 'denied', 'succeeded', 'failed']);
    expect(paths['/api/v1/chat/conversations/{id}/tool-calls/{call_id}'].get).toBeDefined();
    const message = paths['/api/v1/chat/conversations/{id}/messages'].get.responses['200'].content['application/json'].schema.properties.items.items;
    expect(message.properties.tool_calls.type).toBe('array');
  });
});
