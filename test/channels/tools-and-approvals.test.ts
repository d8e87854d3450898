/**
 * What a bound run may do with tools, end to end through the fake Slack and
 * the fake LLM: the read-only rule refuses writes with a notice,
 * not_in_channel comes back as a tool result the run explains, and write
 * approvals are answered with Block Kit buttons by allowed members only.
 */
import { describe, expect, it } from 'vitest';
import { addMember } from '../helpers/members.js';
import type { RecordedSlackCall } from '../fakes/slack/server.js';
import { askInThread, connectChannel, mention, settle, waitForText, useWorld } from './helpers.js';

const ctx = useWorld();

const execute = (id: string, tool: string, args: Record<string, unknown>) => ({ id, name: 'execute_connector_tool', arguments: { tool, arguments: args } });

/** the tool results the model was sent in its n-th request (0-based) */
function toolMessages(n: number): { role: string; content: string }[] {
  const body = ctx.world.llm.requests[n]?.body as { messages: { role: string; content: string }[] } | undefined;
  return (body?.messages ?? []).filter((message) => message.role === 'tool');
}

const approvalPost = (channel: string): Promise<RecordedSlackCall> =>
  ctx.world.slack.waitForCall('chat.postMessage', (call) => call.args['channel'] === channel && call.args['blocks'] !== undefined);

function approvalIdOf(post: RecordedSlackCall): string {
  const blocks = JSON.parse(String(post.args['blocks'])) as { type: string; elements?: { action_id: string; value: string }[] }[];
  const button = blocks.find((block) => block.type === 'actions')?.elements?.find((element) => element.action_id === 'approval_approve');
  if (!button) throw new Error('no approve button');
  return button.value;
}

/** the ts of the fake's stored copy of a bot post */
const storedTs = (channel: string, text: string): string => {
  const found = ctx.world.slack.messages(channel).find((message) => message.text === text);
  if (!found) throw new Error(`no stored message "${text}"`);
  return found.ts;
};

describe('tools in bound runs', () => {
  it('read-only binding: a write tool is refused with the read-only notice and nothing is posted', async () => {
    await connectChannel(ctx.world, { binding: { read_only: true } });
    ctx.world.llm.reset();
    ctx.world.llm.script([
      { tool_calls: [execute('w1', 'slack.post_message', { channel: 'C0RANDOM1', text: 'restarting prod' })] },
      { text: 'This channel is read-only for me, so I did not post anything.' },
    ]);
    await askInThread(ctx.world, 'announce the restart in #random', 'This channel is read-only for me, so I did not post anything.');
    const [result] = toolMessages(1);
    expect(JSON.parse(result?.content ?? '{}')).toMatchObject({ error: { code: 'read_only' } });
    expect(JSON.parse(result?.content ?? '{}').error.message).toContain('read-only');
    expect(ctx.world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === 'C0RANDOM1')).toHaveLength(0);
    // nobody was asked to approve a write that cannot run
    expect(ctx.world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['blocks'] !== undefined)).toHaveLength(0);
  });

  it('surfaces not_in_channel as the tool result and the run explains it', async () => {
    const connected = await connectChannel(ctx.world, { binding: { approval_write: 'allow' } });
    ctx.world.llm.reset();
    ctx.world.llm.script([
      { tool_calls: [execute('p1', 'slack.post_message', { channel: 'C0SECRET1', text: 'status: green' })] },
      { text: 'I am not a member of #secret-plans: invite me with /invite and ask again.' },
    ]);
    await ctx.world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(ctx.world.slack, 'post the status to #secret-plans') });
    await waitForText(ctx.world.slack, 'C0OPS0001', 'I am not a member of #secret-plans: invite me with /invite and ask again.');
    await settle(ctx.world);
    const [result] = toolMessages(1);
    expect(JSON.parse(result?.content ?? '{}')).toMatchObject({ error: { code: 'not_in_channel' } });
    const events = await ctx.world.server.service.services.collections.agentRunEvents.findAll(connected.session.organization.id as never);
    const toolResult = events.find((event) => event.type === 'tool_result');
    expect(toolResult?.data).toMatchObject({ result: { error: { code: 'not_in_channel' } } });
  });

  it('posts the exact tool and arguments with buttons; a non-member and a viewer are refused; a member approves', async () => {
    const connected = await connectChannel(ctx.world, { binding: { approval_write: 'ask' } });
    const viewer = await addMember(ctx.world.server, connected.session, 'viewer');
    ctx.world.slack.addUser({ id: 'U0OWNER01', name: 'owner', email: connected.session.email });
    ctx.world.slack.addUser({ id: 'U0VIEWER1', name: 'viewer', email: viewer.email });
    ctx.world.slack.addUser({ id: 'U0STRANGE', name: 'stranger', email: 'stranger@elsewhere.test' });
    ctx.world.llm.reset();
    ctx.world.llm.script([
      { tool_calls: [execute('a1', 'slack.post_message', { channel: 'C0RANDOM1', text: 'deploy starts in 5 minutes' })] },
      { text: 'Announced in #random.' },
    ]);
    const { message } = await ctx.world.slack.say({
      channel: 'C0OPS0001',
      user: 'U0ALICE01',
      text: mention(ctx.world.slack, 'announce the deploy in #random'),
    });
    const post = await approvalPost('C0OPS0001');
    expect(post.args['thread_ts']).toBe(message.ts);
    const blocksText = String(post.args['blocks']);
    expect(blocksText).toContain('slack.post_message');
    expect(blocksText).toContain('deploy starts in 5 minutes');
    const approvalId = approvalIdOf(post);
    const ts = storedTs('C0OPS0001', String(post.args['text']));

    for (const user of ['U0STRANGE', 'U0VIEWER1']) {
      const refused = await ctx.world.slack.clickButton({ user, channel: 'C0OPS0001', message_ts: ts, action_id: 'approval_approve', value: approvalId });
      expect(refused.status).toBe(200);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 'refused' });
      const ephemeral = await ctx.world.slack.waitForCall('chat.postEphemeral', (call) => call.args['user'] === user);
      expect(ephemeral.args['text']).toContain('not allowed');
    }
    expect(ctx.world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === 'C0RANDOM1')).toHaveLength(0);

    const approved = await ctx.world.slack.clickButton({
      user: 'U0OWNER01',
      channel: 'C0OPS0001',
      message_ts: ts,
      action_id: 'approval_approve',
      value: approvalId,
    });
    expect(JSON.parse(approved.body)).toMatchObject({ status: 'approved' });
    await waitForText(ctx.world.slack, 'C0OPS0001', 'Announced in #random.');
    await settle(ctx.world);
    expect(ctx.world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === 'C0RANDOM1')).toHaveLength(1);
    const update = ctx.world.slack.calls.find((call) => call.method === 'chat.update' && call.args['ts'] === ts);
    expect(update?.args['text']).toBe('Approved by <@U0OWNER01>');
    // the same approval as REST: the decision is in the run transcript, by the mapped service user
    const events = await ctx.world.server.service.services.collections.agentRunEvents.findAll(connected.session.organization.id as never, {
      approval_id: approvalId,
    });
    expect(events.find((event) => event.type === 'approval_decision')?.data).toMatchObject({ decision: 'approved', decided_by: connected.session.user.id });

    // clicked again after the decision: no longer waiting
    const again = await ctx.world.slack.clickButton({ user: 'U0OWNER01', channel: 'C0OPS0001', message_ts: ts, action_id: 'approval_deny', value: approvalId });
    expect(JSON.parse(again.body)).toMatchObject({ status: 'not_pending' });
  });

  it('a deny button resolves the approval as denied and the model reads approval_denied', async () => {
    const connected = await connectChannel(ctx.world, { binding: { approval_write: 'ask' } });
    ctx.world.slack.addUser({ id: 'U0OWNER02', name: 'owner2', email: connected.session.email });
    ctx.world.llm.reset();
    ctx.world.llm.script([
      { tool_calls: [execute('d1', 'slack.post_message', { channel: 'C0RANDOM1', text: 'rollback!' })] },
      { text: 'Understood, I did not post.' },
    ]);
    await ctx.world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(ctx.world.slack, 'announce a rollback') });
    const post = await ctx.world.slack.waitForCall(
      'chat.postMessage',
      (call) => typeof call.args['blocks'] === 'string' && call.args['blocks'].includes('rollback!'),
    );
    const ts = storedTs('C0OPS0001', String(post.args['text']));
    const denied = await ctx.world.slack.clickButton({
      user: 'U0OWNER02',
      channel: 'C0OPS0001',
      message_ts: ts,
      action_id: 'approval_deny',
      value: approvalIdOf(post),
    });
    expect(JSON.parse(denied.body)).toMatchObject({ status: 'denied' });
    await waitForText(ctx.world.slack, 'C0OPS0001', 'Understood, I did not post.');
    await settle(ctx.world);
    expect(JSON.parse(toolMessages(1)[0]?.content ?? '{}')).toMatchObject({ error: { code: 'approval_denied' } });
  });

  it('refuses an interactivity request with a bad signature', async () => {
    const connected = await connectChannel(ctx.world, { binding: null });
    const body = new URLSearchParams({
      payload: JSON.stringify({ type: 'block_actions', user: { id: 'U0ALICE01' }, actions: [{ action_id: 'approval_approve', value: 'apr_x' }] }),
    }).toString();
    const response = await ctx.world.slack.deliver(body, {
      contentType: 'application/x-www-form-urlencoded',
      url: `${connected.eventsUrl}/interactivity`,
      secret: 'wrong',
    });
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'bad_signature' } });
  });
});
