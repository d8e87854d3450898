/**
 * Inbound Slack Events API end to end: the fake Slack posts signed events to
 * the real server, the binding actor routes them, the fake LLM answers, and
 * the reply reaches the fake Slack through @slack/web-api.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { slackSignature } from '../fakes/slack/server.js';
import { botPosts, connectChannel, mention, settle, startWorld, waitForPost, waitForText, type ChannelWorld, type ConnectedChannel } from './helpers.js';

let world: ChannelWorld;
let ops: ConnectedChannel;

const drain = (): Promise<void> => settle(world);
const runs = async (channel: ConnectedChannel) => {
  const listed = await world.server.service.services.collections.agentRuns.findAll(channel.session.organization.id as never);
  return listed.filter((run) => run.input['channel_id'] === channel.channelId);
};

beforeAll(async () => {
  world = await startWorld();
  ops = await connectChannel(world, { matchRule: { slack_channel: '#ops' } });
});
afterAll(async () => {
  await world.close();
});
beforeEach(() => {
  world.slack.eventsUrl = ops.eventsUrl;
});

describe('Slack Events API', () => {
  it('answers url_verification with the challenge', async () => {
    const response = await world.slack.deliver(JSON.stringify({ token: 'x', type: 'url_verification', challenge: 'ch4llenge-123' }));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ challenge: 'ch4llenge-123' });
  });

  it('answers a mention in the channel, in the originating thread, exactly once for app_mention + message', async () => {
    world.llm.script([{ text: ['The deploy ', 'is green.'] }]);
    const { message, deliveries } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, 'is the deploy ok?') });
    // Slack sent two events for one mention; both acknowledged, the second as a duplicate
    expect(deliveries.map((delivery) => delivery.status)).toEqual([200, 200]);
    expect(deliveries.map((delivery) => JSON.parse(delivery.body).status)).toEqual(['accepted', 'duplicate']);
    const reply = await waitForPost(world.slack, 'C0OPS0001');
    expect(reply.args).toMatchObject({ channel: 'C0OPS0001', text: 'The deploy is green.', thread_ts: message.ts });
    await drain();
    expect(world.llm.requests).toHaveLength(1);
    const sent = world.llm.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.at(-1)).toEqual({ role: 'user', content: 'is the deploy ok?' });
    expect(sent.messages[0]?.content).toContain('#ops');
    const [run] = await runs(ops);
    expect(run).toMatchObject({ kind: 'chat', status: 'succeeded', input: { chat_channel: 'C0OPS0001', chat_user: 'U0ALICE01', thread_ts: message.ts } });
  });

  it('continues the conversation for a follow-up mention in the same thread (the thread is the context)', async () => {
    world.llm.reset();
    world.llm.script([{ text: 'Version 41 is live.' }, { text: 'It went out at 09:12 by the pipeline.' }]);
    const first = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, 'which version is live?') });
    await waitForText(world.slack, 'C0OPS0001', 'Version 41 is live.');
    await drain();
    await world.slack.say({ channel: 'C0OPS0001', user: 'U0BOB0001', thread_ts: first.message.ts, text: mention(world.slack, 'when did it go out?') });
    const followUp = await waitForText(world.slack, 'C0OPS0001', 'It went out at 09:12 by the pipeline.');
    expect(followUp.args).toMatchObject({ text: 'It went out at 09:12 by the pipeline.', thread_ts: first.message.ts });
    await drain();
    const sent = world.llm.requests[1]?.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.slice(1)).toEqual([
      { role: 'user', content: 'which version is live?' },
      { role: 'assistant', content: 'Version 41 is live.' },
      { role: 'user', content: 'when did it go out?' },
    ]);
  });

  it('ignores a message that does not mention the bot when the rule is mention-only', async () => {
    world.llm.reset();
    const posts = botPosts(world.slack, 'C0OPS0001').length;
    const { deliveries } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: 'just chatting, no question for the bot' });
    expect(JSON.parse(deliveries[0]?.body ?? '{}')).toMatchObject({ status: 'accepted' });
    await drain();
    expect(world.llm.requests).toHaveLength(0);
    expect(botPosts(world.slack, 'C0OPS0001')).toHaveLength(posts);
  });

  it('ignores a mention in a chat channel the binding does not name (slack_channel resolved via conversations.info)', async () => {
    world.llm.reset();
    await world.slack.say({ channel: 'C0RANDOM1', user: 'U0ALICE01', text: mention(world.slack, 'hello from random') });
    await drain();
    expect(world.slack.calls.some((call) => call.method === 'conversations.info' && call.args['channel'] === 'C0RANDOM1')).toBe(true);
    expect(world.llm.requests).toHaveLength(0);
    expect(botPosts(world.slack, 'C0RANDOM1')).toHaveLength(0);
  });

  it('ignores its own messages and other bots', async () => {
    world.llm.reset();
    await world.slack.say({ channel: 'C0OPS0001', user: world.slack.bot.user_id, bot_id: world.slack.bot.bot_id, text: mention(world.slack, 'I said this') });
    await world.slack.say({ channel: 'C0OPS0001', user: 'U0OTHERBT', bot_id: 'B0OTHER01', text: mention(world.slack, 'another bot asks') });
    await drain();
    expect(world.llm.requests).toHaveLength(0);
  });

  it('deduplicates a retried event (same event_id, X-Slack-Retry-Num)', async () => {
    world.llm.reset();
    world.llm.script([{ text: 'Once.' }]);
    const message = { ts: '1700000000.000777', user: 'U0ALICE01', text: mention(world.slack, 'retry me') };
    const body = JSON.stringify(world.slack.eventBody('app_mention', message, 'C0OPS0001', 'Ev0RETRY01'));
    const first = await world.slack.deliver(body);
    const retry = await world.slack.deliver(body, { retryNum: 1 });
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(JSON.parse(retry.body)).toMatchObject({ status: 'duplicate' });
    await waitForText(world.slack, 'C0OPS0001', 'Once.');
    await drain();
    expect(world.llm.requests).toHaveLength(1);
  });

  it('forgets event keys after two days (swept once a day per organization)', async () => {
    const fresh = await connectChannel(world, { channel: { display_name: 'Sweep' }, binding: null });
    const org = fresh.session.organization.id as never;
    const old = new Date(Date.now() - 5 * 86_400_000);
    await world.server.service.services.collections.channelEvents.insert(org, {
      channel_id: fresh.channelId,
      key: 'event:Ev0OLD0001',
      received_at: old.toISOString(),
      day: old.toISOString().slice(0, 10),
    });
    const body = JSON.stringify(world.slack.eventBody('app_mention', { ts: '1700000002.000001', user: 'U0ALICE01', text: 'x' }, 'C0OPS0001', 'Ev0OLD0001'));
    const answer = await world.slack.deliver(body, { url: fresh.eventsUrl });
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'accepted' });
    const again = await world.slack.deliver(body, { url: fresh.eventsUrl });
    expect(JSON.parse(again.body)).toMatchObject({ status: 'duplicate' });
  });

  it('rejects a stale timestamp, a bad signature and a missing signature with 401 bad_signature, without a run', async () => {
    world.llm.reset();
    const body = JSON.stringify(
      world.slack.eventBody('app_mention', { ts: '1700000001.000001', user: 'U0ALICE01', text: mention(world.slack, 'x') }, 'C0OPS0001'),
    );
    const stale = await world.slack.deliver(body, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(stale.status).toBe(401);
    expect(JSON.parse(stale.body)).toMatchObject({ error: { code: 'bad_signature', details: { reason: 'stale' } } });
    const wrong = await world.slack.deliver(body, { secret: 'not-the-signing-secret' });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ error: { code: 'bad_signature', details: { reason: 'mismatch' } } });
    // a valid signature of another body: the bytes are what is signed
    const ts = Math.floor(Date.now() / 1000);
    const swapped = await world.slack.deliver(body, { timestamp: ts, signature: slackSignature(world.slack.signingSecret, ts, `${body} `) });
    expect(swapped.status).toBe(401);
    const missing = await fetch(ops.eventsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: { code: 'bad_signature', details: { reason: 'missing' } } });
    await drain();
    expect(world.llm.requests).toHaveLength(0);
  });

  it('answers 404 for an unknown channel', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'x' });
    const response = await world.slack.deliver(body, { url: `${world.server.url}/chat/incoming/slack/chn_01UNKNOWN0000000000000000` });
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'not_found' } });
  });

  it('acknowledges but does not answer on a disabled channel', async () => {
    world.llm.reset();
    const patch = await world.server.request('PATCH', `/channels/${ops.channelId}`, { token: ops.session.token, body: { is_active: false } });
    expect(patch.status).toBe(200);
    try {
      const { deliveries } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, 'anyone?') });
      expect(deliveries[0]?.status).toBe(200);
      expect(JSON.parse(deliveries[0]?.body ?? '{}')).toMatchObject({ status: 'ignored', reason: 'channel_disabled' });
      await drain();
      expect(world.llm.requests).toHaveLength(0);
    } finally {
      await world.server.request('PATCH', `/channels/${ops.channelId}`, { token: ops.session.token, body: { is_active: true } });
    }
  });

  it('enforces the per-user rate limit with an ephemeral notice and no run', async () => {
    const limited = await connectChannel(world, {
      channel: { display_name: 'Limited', filter_config: { rate_limits: { per_user_per_minute: 1, per_channel_per_minute: 10 } } },
      matchRule: { slack_channel: null },
    });
    world.llm.reset();
    world.llm.script([{ text: 'First answer.' }]);
    const ephemeralsBefore = world.slack.calls.filter((call) => call.method === 'chat.postEphemeral').length;
    await world.slack.say({ channel: 'C0RANDOM1', user: 'U0BOB0001', text: mention(world.slack, 'one') });
    await world.slack.say({ channel: 'C0RANDOM1', user: 'U0BOB0001', text: mention(world.slack, 'two') });
    await drain();
    const notice = await world.slack.waitForCall('chat.postEphemeral', (call) => call.args['user'] === 'U0BOB0001');
    expect(notice.args['text']).toContain('limit');
    expect(world.slack.calls.filter((call) => call.method === 'chat.postEphemeral')).toHaveLength(ephemeralsBefore + 1);
    await waitForText(world.slack, 'C0RANDOM1', 'First answer.');
    await drain();
    expect(world.llm.requests).toHaveLength(1);
    expect(limited.channelId).not.toBe(ops.channelId);
  });
});
