/** Shared by the channel and binding suites: an organization wired to the fake LLM and a Slack channel connected to the fake Slack. */
import { expect } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { startFakeSlack, type FakeSlack, type RecordedSlackCall } from '../fakes/slack/server.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { useSuite } from '../helpers/suite.js';

export interface ChannelWorld {
  readonly server: TestServer;
  readonly llm: FakeLlmServer;
  readonly slack: FakeSlack;
  close(): Promise<void>;
}

export async function startWorld(options: { scopes?: readonly string[]; env?: Record<string, string> } = {}): Promise<ChannelWorld> {
  const server = await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY, ...options.env });
  const llm = await startFakeLlmServer();
  const slack = await startFakeSlack(options.scopes === undefined ? {} : { scopes: options.scopes });
  slack.addChannel({ id: 'C0OPS0001', name: 'ops' });
  slack.addChannel({ id: 'C0RANDOM1', name: 'random' });
  slack.addChannel({ id: 'C0SECRET1', name: 'secret-plans', bot_member: false });
  slack.addUser({ id: 'U0ALICE01', name: 'alice' });
  slack.addUser({ id: 'U0BOB0001', name: 'bob' });
  return {
    server,
    llm,
    slack,
    close: async () => {
      await server.stop();
      await slack.close();
      await llm.close();
    },
  };
}

export interface ConnectedChannel {
  readonly session: Session;
  readonly channelId: string;
  readonly bindingId: string | null;
  /** `${server.url}/chat/incoming/slack/<id>` */
  readonly eventsUrl: string;
}

/** Registers an organization on the fake LLM, creates and connects a Slack channel, and (unless told not to) binds the default agent. */
export async function connectChannel(
  world: ChannelWorld,
  options: {
    session?: Session;
    channel?: Record<string, unknown>;
    binding?: Record<string, unknown> | null;
    matchRule?: Record<string, unknown>;
    connect?: Record<string, unknown>;
  } = {},
): Promise<ConnectedChannel> {
  const { server, llm, slack } = world;
  const session = options.session ?? (await server.register());
  const settings = await server.request('PATCH', '/settings', {
    token: session.token,
    body: { llm_provider: 'openai', llm_model: 'gpt-4o-mini', llm_base_url: llm.baseUrl('openai'), llm_api_key: llm.apiKey },
  });
  if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);
  const created = await server.request('POST', '/channels', {
    token: session.token,
    body: { channel_type: 'slack', display_name: 'Ops Slack', ...options.channel },
  });
  if (created.status !== 201) throw new Error(`channel: ${created.status} ${created.text}`);
  const channelId = created.body.id as string;
  const connected = await server.request('POST', `/channels/${channelId}/connect`, {
    token: session.token,
    body: { bot_token: slack.bot.token, signing_secret: slack.signingSecret, api_base_url: slack.apiUrl, ...options.connect },
  });
  if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${connected.text}`);
  let bindingId: string | null = null;
  if (options.binding !== null) {
    const binding = await server.request('POST', '/bindings', {
      token: session.token,
      body: { agent: 'default', match_rule: { channel: channelId, mentioned: true, preserve_thread: true, ...options.matchRule }, ...options.binding },
    });
    if (binding.status !== 201) throw new Error(`binding: ${binding.status} ${binding.text}`);
    bindingId = binding.body.id as string;
  }
  const eventsUrl = `${server.url}/chat/incoming/slack/${channelId}`;
  slack.eventsUrl = eventsUrl;
  return { session, channelId, bindingId, eventsUrl };
}

export const mention = (slack: FakeSlack, text: string): string => `<@${slack.bot.user_id}> ${text}`;

/** the bot's posts in a channel (chat.postMessage calls), in order */
export const botPosts = (slack: FakeSlack, channel: string): RecordedSlackCall[] =>
  slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['channel'] === channel);

/** Waits for the bot's n-th post (1-based) in a channel. */
export async function waitForPost(slack: FakeSlack, channel: string, n = 1): Promise<RecordedSlackCall> {
  let seen = 0;
  return slack.waitForCall('chat.postMessage', (call) => call.args['channel'] === channel && ++seen === n);
}

/** Waits for the bot's post of exactly this text in a channel. */
export const waitForText = (slack: FakeSlack, channel: string, text: string): Promise<RecordedSlackCall> =>
  slack.waitForCall('chat.postMessage', (call) => call.args['channel'] === channel && call.args['text'] === text);

/**
 * Alice mentions the bot in #ops (over the Events API, or the socket), the bot's reply `answer` arrives in her
 * message's thread, and the runs settle. Returns her message, Slack's deliveries of it and the reply.
 */
export async function askInThread(
  world: ChannelWorld,
  question: string,
  answer: string,
  options: { readonly via?: 'socket' } = {},
): Promise<{ message: { ts: string }; deliveries: { body: string }[]; reply: RecordedSlackCall }> {
  const { message, deliveries } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', ...options, text: mention(world.slack, question) });
  const reply = await waitForText(world.slack, 'C0OPS0001', answer);
  expect(reply.args['thread_ts']).toBe(message.ts);
  await settle(world);
  return { message, deliveries, reply };
}

/** Resolves once inbound routing is done and no agent run is live (replies posted). */
export async function settle(world: ChannelWorld): Promise<void> {
  const { channels, agentRuntime } = world.server.service.services;
  await eventually(
    async () => {
      await channels.drain();
      await agentRuntime.drain();
      return agentRuntime.liveRuns === 0 || undefined;
    },
    { what: 'the channel runs to settle', interval: 10, timeout: 25_000 },
  );
}

/** `startWorld` for the suite it is called in: started in beforeAll, closed in afterAll; tests read `ctx.world`. */
export const useWorld = (options: Parameters<typeof startWorld>[0] = {}): { world: ChannelWorld } =>
  useSuite(async (own) => ({ world: own(await startWorld(options)) }));
