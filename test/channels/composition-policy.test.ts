/**
 * The spec's composition with the read-only rule as a Rego policy (feature
 * `policies`): a mention-only, thread-preserving Slack binding whose writes
 * would ask for an approval; the policy answers first, so reads run, the write
 * is refused with the read-only message and nobody is asked to approve it.
 */
import { describe, expect, it } from 'vitest';
import { askInThread, connectChannel, settle, useWorld } from './helpers.js';

const READ_ONLY = 'package service.read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "read-only"\n}\n';
const ANSWER = 'Team Falcon owns the api service. I cannot store notes here: this channel is read-only.';
const execute = (id: string, tool: string, args: Record<string, unknown>) => ({ id, name: 'execute_connector_tool', arguments: { tool, arguments: args } });
type Transcript = { messages: { role: string; tool_call_id?: string; content: string }[] };

const ctx = useWorld({ env: { SERVICE_FEATURES_POLICIES: 'true' } });

describe('composition: mention-only, thread-preserving binding with a read-only Rego policy', () => {
  it('answers with read tools in the thread and refuses the write with the read-only message, before any approval', async () => {
    const session = await ctx.world.server.register();
    const memory = await ctx.world.server.request('POST', '/memory', {
      token: session.token,
      body: { kind: 'fact', realm: 'default', text: 'The api service in the payments namespace is owned by team Falcon.' },
    });
    expect(memory.status, memory.text).toBe(201);
    const policy = await ctx.world.server.request('POST', '/policies', { token: session.token, body: { name: 'read_only', rego_code: READ_ONLY } });
    expect(policy.status, policy.text).toBe(201);
    const channel = await connectChannel(ctx.world, {
      session,
      matchRule: { slack_channel: 'ops', mentioned: true, preserve_thread: true },
      // writes would wait for an approval in the thread: the policy's deny comes first
      binding: { approval_write: 'ask' },
    });

    await ctx.world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: 'who owns the api?' });
    await settle(ctx.world);
    expect(ctx.world.llm.requests).toHaveLength(0);

    ctx.world.llm.script([
      { tool_calls: [execute('m1', 'memory.recall', { query: 'api owner' })] },
      { tool_calls: [execute('w1', 'memory.store', { kind: 'note', realm: 'default', text: 'asked about the api' })] },
      { text: ANSWER },
    ]);
    await askInThread(ctx.world, 'who owns the api? note that I asked', ANSWER);

    const second = ctx.world.llm.requests[1]?.body as Transcript;
    expect(second.messages.find((entry) => entry.tool_call_id === 'm1')?.content).toContain('team Falcon');
    const third = ctx.world.llm.requests[2]?.body as Transcript;
    const refusal = JSON.parse(third.messages.find((entry) => entry.tool_call_id === 'w1')?.content ?? '{}');
    expect(refusal).toMatchObject({ error: { code: 'policy_denied', details: { messages: ['read-only'] } } });
    // no approval was posted in the thread, and nothing was stored
    expect(ctx.world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['blocks'] !== undefined)).toHaveLength(0);
    const notes = await ctx.world.server.request('GET', '/memory', { token: session.token });
    expect(notes.body.items.map((item: { text: string }) => item.text)).toEqual(['The api service in the payments namespace is owned by team Falcon.']);
    // the decision names the binding as its subject
    const denied = await ctx.world.server.request('GET', '/policies/decisions?result=deny', { token: session.token });
    expect(denied.body.items).toHaveLength(1);
    expect(denied.body.items[0].input.subject.binding).toBe(channel.bindingId);
  });
});
