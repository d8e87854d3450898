/**
 * Parked binding runs (the `binding` resumer in domains/channels/binding-runs.ts):
 * a bound run waiting for a write approval is parked after AGENT_PARK_AFTER_MS;
 * the Approve button in the thread brings it back, also after a restart, and
 * its reply goes to the same thread. The simulated runtime clock (started at
 * the real time: Slack signatures are checked against it) passes the idle period.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer } from '../fakes/llm/server.js';
import { startFakeSlack, type RecordedSlackCall } from '../fakes/slack/server.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer } from '../helpers/server.js';
import { connectChannel, mention, waitForText, type ChannelWorld } from './helpers.js';

const PARK_AFTER_MS = 1000;

const execute = (id: string, tool: string, args: Record<string, unknown>) => ({ id, name: 'execute_connector_tool', arguments: { tool, arguments: args } });

function approvalIdOf(post: RecordedSlackCall): string {
  const blocks = JSON.parse(String(post.args['blocks'])) as { type: string; elements?: { action_id: string; value: string }[] }[];
  const button = blocks.find((block) => block.type === 'actions')?.elements?.find((element) => element.action_id === 'approval_approve');
  if (!button) throw new Error('no approve button');
  return button.value;
}

describe('parked binding runs', () => {
  const clock = simulatedClock(new Date().toISOString());
  const dataDir = mkdtempSync(join(tmpdir(), 'parked-bindings-'));
  const env = { LLM_API_KEY: FAKE_LLM_API_KEY, AGENT_PARK_AFTER_MS: String(PARK_AFTER_MS), JWT_SECRET: randomBytes(32).toString('hex') };
  let world: ChannelWorld & { server: Awaited<ReturnType<typeof startTestServer>> };
  beforeAll(async () => {
    const llm = await startFakeLlmServer();
    const slack = await startFakeSlack();
    slack.addChannel({ id: 'C0OPS0001', name: 'ops' });
    slack.addChannel({ id: 'C0RANDOM1', name: 'random' });
    slack.addUser({ id: 'U0ALICE01', name: 'alice' });
    const server = await startTestServer(env, { clock, dataDir });
    world = { server, llm, slack, close: async () => undefined };
  });
  afterAll(async () => {
    await world.server.stop();
    await world.slack.close();
    await world.llm.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const runtime = () => world.server.service.services.agentRuntime;

  /** Alice asks for a write; the approval request is posted; the idle period passes and the run parks. */
  async function parkedAsk(text: string, user: string) {
    const { message } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, text) });
    const post = await world.slack.waitForCall(
      'chat.postMessage',
      (call) =>
        call.args['blocks'] !== undefined &&
        call.args['thread_ts'] === message.ts &&
        JSON.stringify(call.args['blocks']).includes(text.split(' ').at(-1) ?? ''),
    );
    const parkedBefore = runtime().parkedRuns;
    clock.increment(PARK_AFTER_MS + 10);
    await eventually(() => (runtime().parkedRuns > parkedBefore ? true : undefined), { what: 'the binding run to park' });
    const stored = world.slack.messages('C0OPS0001').find((entry) => entry.text === post.args['text'] && entry.thread_ts === message.ts);
    return { message, approvalId: approvalIdOf(post), click: { user, channel: 'C0OPS0001', message_ts: stored?.ts ?? '', value: approvalIdOf(post) } };
  }

  it('parks while the thread waits for a click; Approve brings it back, the tool runs and the reply lands in the thread', async () => {
    const connected = await connectChannel(world, { binding: { approval_write: 'ask' } });
    world.slack.addUser({ id: 'U0OWNER01', name: 'owner', email: connected.session.email });
    world.llm.script([
      { tool_calls: [execute('b1', 'slack.post_message', { channel: 'C0RANDOM1', text: 'deploy at noon' })] },
      { text: 'Announced the noon deploy.' },
    ]);
    const { message, click } = await parkedAsk('announce the deploy at noon', 'U0OWNER01');
    const actors = await world.server.request('GET', '/runtime/actors', { token: connected.session.token });
    expect((actors.body.items as { kind: string }[]).filter((actor) => actor.kind === 'agent_run')).toEqual([]);

    const approved = await world.slack.clickButton({ ...click, action_id: 'approval_approve' });
    expect(JSON.parse(approved.body)).toMatchObject({ status: 'approved' });
    const reply = await waitForText(world.slack, 'C0OPS0001', 'Announced the noon deploy.');
    expect(reply.args['thread_ts']).toBe(message.ts);
    expect(world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === 'C0RANDOM1')).toHaveLength(1);
    expect(runtime().parkedRuns).toBe(0);
  });

  it('survives a restart: the click after it resumes the run and a second approval is posted to the thread again', async () => {
    const connected = await connectChannel(world, { binding: { approval_write: 'ask' } });
    world.slack.addUser({ id: 'U0OWNER02', name: 'owner2', email: connected.session.email });
    world.llm.script([{ tool_calls: [execute('b2', 'slack.post_message', { channel: 'C0RANDOM1', text: 'first of two' })] }]);
    const { message, click } = await parkedAsk('post the first of two', 'U0OWNER02');

    await world.server.stop();
    world.server = await startTestServer(env, { clock, dataDir });
    expect(runtime().parkedRuns).toBe(1);
    // the fake's events go to the new listening address
    world.slack.eventsUrl = `${world.server.url}/chat/incoming/slack/${connected.channelId}`;

    world.llm.script([{ tool_calls: [execute('b3', 'slack.post_message', { channel: 'C0RANDOM1', text: 'second of two' })] }, { text: 'Both posted.' }]);
    const approved = await world.slack.clickButton({ ...click, action_id: 'approval_approve' });
    expect(JSON.parse(approved.body)).toMatchObject({ status: 'approved' });
    const second = await world.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args['blocks'] !== undefined && call.args['thread_ts'] === message.ts && JSON.stringify(call.args['blocks']).includes('second of two'),
    );
    const stored = world.slack
      .messages('C0OPS0001')
      .find((entry) => entry.text === second.args['text'] && entry.thread_ts === message.ts && entry.ts !== click.message_ts);
    const again = await world.slack.clickButton({
      user: 'U0OWNER02',
      channel: 'C0OPS0001',
      message_ts: stored?.ts ?? '',
      action_id: 'approval_approve',
      value: approvalIdOf(second),
    });
    expect(JSON.parse(again.body)).toMatchObject({ status: 'approved' });
    const reply = await waitForText(world.slack, 'C0OPS0001', 'Both posted.');
    expect(reply.args['thread_ts']).toBe(message.ts);
    const posted = world.slack.calls
      .filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === 'C0RANDOM1')
      .map((call) => call.args['text']);
    expect(posted).toContain('first of two');
    expect(posted).toContain('second of two');
  });
});
