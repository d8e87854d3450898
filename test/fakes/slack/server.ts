/**
 * A fake Slack on 127.0.0.1 speaking the real wire formats, for the official
 * `@slack/web-api` and `@slack/socket-mode` clients pointed at it
 * (`slackApiUrl: fake.apiUrl`):
 *
 * - Web API: `POST /api/<method>` (form-encoded or JSON body, `Authorization: Bearer <token>`),
 *   answers `{ok:true,...}` or `{ok:false,error}` with HTTP 200 like Slack, the token's scopes
 *   in the `x-oauth-scopes` header, and `429` with `Retry-After` when told to (`rateLimitNext`).
 *   Methods: auth.test, chat.postMessage (not_in_channel unless the bot is a member or has
 *   chat:write.public), chat.postEphemeral, chat.update, conversations.replies/history/info/list
 *   (cursor pagination), users.info, apps.connections.open (app tokens; a ws:// URL served here).
 *   Every call is recorded (`calls`, `waitForCall`).
 * - Events API: `say(...)` plays a person posting: the message is stored, and Slack's
 *   `event_callback` requests (`message`, plus `app_mention` when the bot is mentioned) are
 *   delivered to the Events URL signed with the v0 scheme (`X-Slack-Signature`,
 *   `X-Slack-Request-Timestamp`), or over an open Socket Mode connection as envelopes.
 *   `deliver(...)` sends any raw body with chosen headers (stale timestamps, retries, bad signatures).
 * - Interactivity: `clickButton(...)` posts a `block_actions` payload (`payload=` form field), signed.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeSlackBot {
  readonly token: string;
  readonly scopes: readonly string[];
  readonly user_id: string;
  readonly bot_id: string;
  readonly team_id: string;
}

export interface FakeSlackChannel {
  readonly id: string;
  readonly name: string;
  readonly is_private: boolean;
  /** whether the bot has joined */
  bot_member: boolean;
}

export interface FakeSlackUser {
  readonly id: string;
  readonly name: string;
  readonly email: string | null;
  readonly is_bot: boolean;
}

export interface FakeSlackMessage {
  readonly ts: string;
  readonly user?: string;
  readonly bot_id?: string;
  text: string;
  readonly thread_ts?: string;
  blocks?: unknown;
}

export interface RecordedSlackCall {
  readonly method: string;
  readonly token: string | null;
  readonly args: Record<string, unknown>;
  readonly at: number;
}

export interface Delivery {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

export interface SayOptions {
  readonly channel: string;
  readonly user: string;
  readonly text: string;
  /** reply in this thread */
  readonly thread_ts?: string;
  /** a bot's message (bot_id set) */
  readonly bot_id?: string;
  /** where to deliver: the Events URL (default) or the open Socket Mode connection */
  readonly via?: 'http' | 'socket';
  /** also deliver `app_mention` when the text mentions the bot (default true, as Slack does) */
  readonly app_mention?: boolean;
}

export interface FakeSlack {
  /** `http://127.0.0.1:<port>/api/`: what WebClient takes as slackApiUrl */
  readonly apiUrl: string;
  readonly bot: FakeSlackBot;
  readonly appToken: string;
  /** the v0 signing secret the fake signs with */
  readonly signingSecret: string;
  readonly calls: RecordedSlackCall[];
  /** where events and interactions are posted (`.../chat/incoming/slack/<channel id>`) */
  eventsUrl: string | null;
  /** the host `apps.connections.open` names in its ws:// URL (default 127.0.0.1, where the fake listens) */
  socketHost: string;
  addChannel(channel: { id: string; name: string; is_private?: boolean; bot_member?: boolean }): FakeSlackChannel;
  addUser(user: { id: string; name: string; email?: string | null; is_bot?: boolean }): FakeSlackUser;
  /** the stored messages of a channel (top level and replies), oldest first */
  messages(channel: string): FakeSlackMessage[];
  /** the next `count` calls of `method` answer 429 with Retry-After: `retryAfterSecs` */
  rateLimitNext(method: string, retryAfterSecs: number, count?: number): void;
  /** resolves with the first recorded call (past or future) that matches */
  waitForCall(method: string, predicate?: (call: RecordedSlackCall) => boolean): Promise<RecordedSlackCall>;
  /** a person posts a message; Slack's events follow. Resolves with the message and the delivery answers. */
  say(options: SayOptions): Promise<{ message: FakeSlackMessage; deliveries: Delivery[] }>;
  /** an event_callback body (what Slack posts) for a message */
  eventBody(type: 'message' | 'app_mention', message: FakeSlackMessage, channel: string, eventId?: string): Record<string, unknown>;
  /** posts a raw body to the Events URL, signed unless told otherwise */
  deliver(
    body: string,
    options?: { timestamp?: number; retryNum?: number; signature?: string; secret?: string; contentType?: string; url?: string },
  ): Promise<Delivery>;
  /** a person clicks a button of a bot message (block_actions), posted to `<eventsUrl>/interactivity` */
  clickButton(options: { user: string; channel: string; message_ts: string; action_id: string; value: string; thread_ts?: string }): Promise<Delivery>;
  /** resolves once a Socket Mode client is connected (hello sent) */
  whenSocketConnected(): Promise<void>;
  /** envelopes acknowledged over Socket Mode, by envelope id */
  readonly acks: string[];
  close(): Promise<void>;
}

/** The v0 request signature Slack sends: `v0=` + hex HMAC-SHA256 of `v0:<ts>:<body>`. */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return 'v0=' + createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
}

interface CallContext {
  readonly token: string | null;
  readonly args: Record<string, unknown>;
}

type MethodAnswer = { readonly body: Record<string, unknown>; readonly headers?: Record<string, string> };

const PAGE = 2;

export async function startFakeSlack(options: { scopes?: readonly string[]; signingSecret?: string } = {}): Promise<FakeSlack> {
  const bot: FakeSlackBot = {
    token: `xoxb-${randomBytes(6).toString('hex')}`,
    scopes: options.scopes ?? ['chat:write', 'channels:history', 'channels:read', 'users:read', 'users:read.email'],
    user_id: 'UBOT0001',
    bot_id: 'BBOT0001',
    team_id: 'T0TEAM01',
  };
  const appToken = `xapp-1-${randomBytes(6).toString('hex')}`;
  const signingSecret = options.signingSecret ?? randomBytes(16).toString('hex');
  const channels = new Map<string, FakeSlackChannel>();
  const users = new Map<string, FakeSlackUser>();
  const stored = new Map<string, FakeSlackMessage[]>();
  const calls: RecordedSlackCall[] = [];
  const acks: string[] = [];
  const rateLimits = new Map<string, { retryAfter: number; count: number }>();
  let waiters: { method: string; predicate: (call: RecordedSlackCall) => boolean; resolve: (call: RecordedSlackCall) => void }[] = [];
  let tsCounter = 0;
  let eventCounter = 0;
  let socket: WebSocket | null = null;
  let socketWaiters: (() => void)[] = [];

  const nextTs = (): string => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(tsCounter).padStart(6, '0')}`;
  };
  const fail = (error: string, extra: Record<string, unknown> = {}): MethodAnswer => ({ body: { ok: false, error, ...extra } });
  const channelOf = (id: unknown): FakeSlackChannel | undefined => (typeof id === 'string' ? channels.get(id) : undefined);
  const store = (channel: string, message: FakeSlackMessage): FakeSlackMessage => {
    const list = stored.get(channel) ?? [];
    list.push(message);
    stored.set(channel, list);
    return message;
  };
  const paginate = <T>(items: readonly T[], args: Record<string, unknown>, key: string): Record<string, unknown> => {
    const limit = Math.max(1, Math.min(Number(args['limit'] ?? PAGE) || PAGE, 1000));
    const start = typeof args['cursor'] === 'string' && args['cursor'] !== '' ? Number(Buffer.from(args['cursor'], 'base64').toString()) : 0;
    const page = items.slice(start, start + limit);
    const more = start + limit < items.length;
    return {
      [key]: page,
      has_more: more,
      response_metadata: { next_cursor: more ? Buffer.from(String(start + limit)).toString('base64') : '' },
    };
  };

  const methods: Record<string, (ctx: CallContext) => MethodAnswer> = {
    'auth.test': () => ({
      body: {
        ok: true,
        url: 'https://fake.slack.test/',
        team: 'Fake Team',
        user: 'service-bot',
        team_id: bot.team_id,
        user_id: bot.user_id,
        bot_id: bot.bot_id,
      },
    }),
    'chat.postMessage': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      if (!channel.bot_member && !(bot.scopes.includes('chat:write.public') && !channel.is_private)) return fail('not_in_channel');
      const text = typeof args['text'] === 'string' ? args['text'] : '';
      if (text === '' && args['blocks'] === undefined) return fail('no_text');
      const threadTs = typeof args['thread_ts'] === 'string' ? args['thread_ts'] : undefined;
      const message = store(channel.id, {
        ts: nextTs(),
        user: bot.user_id,
        bot_id: bot.bot_id,
        text,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        ...(args['blocks'] === undefined ? {} : { blocks: typeof args['blocks'] === 'string' ? JSON.parse(args['blocks']) : args['blocks'] }),
      });
      return { body: { ok: true, channel: channel.id, ts: message.ts, message: { ...message, type: 'message' } } };
    },
    'chat.postEphemeral': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      if (typeof args['user'] !== 'string' || !users.has(args['user'])) return fail('user_not_found');
      return { body: { ok: true, message_ts: nextTs() } };
    },
    'chat.update': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      const message = (stored.get(channel.id) ?? []).find((item) => item.ts === args['ts']);
      if (!message) return fail('message_not_found');
      message.text = typeof args['text'] === 'string' ? args['text'] : message.text;
      if (args['blocks'] !== undefined) message.blocks = typeof args['blocks'] === 'string' ? JSON.parse(args['blocks']) : args['blocks'];
      return { body: { ok: true, channel: channel.id, ts: message.ts, text: message.text } };
    },
    'conversations.replies': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      const thread = (stored.get(channel.id) ?? []).filter((item) => item.ts === args['ts'] || item.thread_ts === args['ts']);
      if (thread.length === 0) return fail('thread_not_found');
      return {
        body: {
          ok: true,
          ...paginate(
            thread.map((item) => ({ type: 'message', ...item })),
            args,
            'messages',
          ),
        },
      };
    },
    'conversations.history': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      if (!channel.bot_member) return fail('not_in_channel');
      const oldest = typeof args['oldest'] === 'string' ? Number(args['oldest']) : 0;
      const top = (stored.get(channel.id) ?? []).filter((item) => (item.thread_ts === undefined || item.thread_ts === item.ts) && Number(item.ts) > oldest);
      const withCounts = top.reverse().map((item) => ({
        type: 'message',
        ...item,
        reply_count: (stored.get(channel.id) ?? []).filter((reply) => reply.thread_ts === item.ts && reply.ts !== item.ts).length,
      }));
      return { body: { ok: true, ...paginate(withCounts, args, 'messages') } };
    },
    'conversations.info': ({ args }) => {
      const channel = channelOf(args['channel']);
      if (!channel) return fail('channel_not_found');
      return { body: { ok: true, channel: presentChannel(channel) } };
    },
    'conversations.list': ({ args }) => ({ body: { ok: true, ...paginate([...channels.values()].map(presentChannel), args, 'channels') } }),
    'users.info': ({ args }) => {
      const user = typeof args['user'] === 'string' ? users.get(args['user']) : undefined;
      if (!user) return fail('user_not_found');
      const email = bot.scopes.includes('users:read.email') ? user.email : null;
      return {
        body: { ok: true, user: { id: user.id, name: user.name, is_bot: user.is_bot, profile: { real_name: user.name, ...(email ? { email } : {}) } } },
      };
    },
    'apps.connections.open': ({ token }) => {
      if (token !== appToken) return fail('invalid_auth');
      return { body: { ok: true, url: `ws://${fake.socketHost}:${port}/link/?ticket=${randomBytes(4).toString('hex')}` } };
    },
  };

  const presentChannel = (channel: FakeSlackChannel) => ({
    id: channel.id,
    name: channel.name,
    is_channel: !channel.is_private,
    is_private: channel.is_private,
    is_member: channel.bot_member,
    topic: { value: `${channel.name} topic` },
  });

  const readBody = (request: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      request.on('error', reject);
    });

  const parseArgs = (body: string, contentType: string): Record<string, unknown> => {
    if (body === '') return {};
    if (contentType.includes('application/json')) return JSON.parse(body) as Record<string, unknown>;
    return Object.fromEntries(new URLSearchParams(body));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const match = /^\/api\/([a-zA-Z.]+)$/.exec(url.pathname);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(body));
    };
    if (!match?.[1] || request.method !== 'POST') return answer(404, { ok: false, error: 'unknown_method' });
    const method = match[1];
    const args = parseArgs(await readBody(request), request.headers['content-type'] ?? '');
    const auth = request.headers['authorization'];
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : typeof args['token'] === 'string' ? args['token'] : null;
    delete args['token'];
    const call: RecordedSlackCall = { method, token, args, at: Date.now() };
    calls.push(call);
    waiters = waiters.filter((waiter) => {
      if (waiter.method !== method || !waiter.predicate(call)) return true;
      waiter.resolve(call);
      return false;
    });
    const limit = rateLimits.get(method);
    if (limit && limit.count > 0) {
      limit.count -= 1;
      return answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(limit.retryAfter) });
    }
    const handler = methods[method];
    if (!handler) return answer(200, { ok: false, error: 'unknown_method' });
    if (method !== 'apps.connections.open') {
      if (token === null) return answer(200, { ok: false, error: 'not_authed' });
      if (token !== bot.token) return answer(200, { ok: false, error: 'invalid_auth' });
    }
    const result = handler({ token, args });
    const scopeHeader: Record<string, string> =
      method === 'apps.connections.open' ? {} : { 'x-oauth-scopes': bot.scopes.join(','), 'x-accepted-oauth-scopes': '' };
    answer(200, result.body, { ...scopeHeader, ...result.headers });
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: false, error: 'fake_failure', detail: String(error) }));
    });
  });
  const wss = new WebSocketServer({ server, path: '/link/' });
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data: Buffer) => {
      const parsed = JSON.parse(data.toString()) as { envelope_id?: string };
      if (typeof parsed.envelope_id === 'string') acks.push(parsed.envelope_id);
    });
    ws.on('close', () => {
      if (socket === ws) socket = null;
    });
    ws.send(JSON.stringify({ type: 'hello', num_connections: 1, debug_info: { host: 'fake-slack' }, connection_info: { app_id: 'A0FAKE01' } }));
    for (const resolve of socketWaiters) resolve();
    socketWaiters = [];
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const sign = (body: string, timestamp: number, secret: string): string => slackSignature(secret, timestamp, body);

  const fake: FakeSlack = {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    bot,
    appToken,
    signingSecret,
    calls,
    acks,
    eventsUrl: null,
    socketHost: '127.0.0.1',
    addChannel: (channel) => {
      const created: FakeSlackChannel = { id: channel.id, name: channel.name, is_private: channel.is_private ?? false, bot_member: channel.bot_member ?? true };
      channels.set(created.id, created);
      return created;
    },
    addUser: (user) => {
      const created: FakeSlackUser = { id: user.id, name: user.name, email: user.email ?? null, is_bot: user.is_bot ?? false };
      users.set(created.id, created);
      return created;
    },
    messages: (channel) => [...(stored.get(channel) ?? [])],
    rateLimitNext: (method, retryAfterSecs, count = 1) => {
      rateLimits.set(method, { retryAfter: retryAfterSecs, count });
    },
    waitForCall: (method, predicate = () => true) => {
      const found = calls.find((call) => call.method === method && predicate(call));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ method, predicate, resolve }));
    },
    eventBody: (type, message, channel, eventId) => {
      eventCounter += 1;
      return {
        token: 'legacy-verification-token',
        team_id: bot.team_id,
        api_app_id: 'A0FAKE01',
        type: 'event_callback',
        event_id: eventId ?? `Ev${String(eventCounter).padStart(8, '0')}`,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [{ team_id: bot.team_id, user_id: bot.user_id, is_bot: true }],
        event: {
          type,
          channel,
          user: message.user,
          ...(message.bot_id ? { bot_id: message.bot_id } : {}),
          text: message.text,
          ts: message.ts,
          event_ts: message.ts,
          ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
          channel_type: 'channel',
        },
      };
    },
    deliver: async (body, deliverOptions = {}) => {
      const url = deliverOptions.url ?? fake.eventsUrl;
      if (url === null) throw new Error('fake slack: set eventsUrl first');
      const timestamp = deliverOptions.timestamp ?? Math.floor(Date.now() / 1000);
      const headers: Record<string, string> = {
        'content-type': deliverOptions.contentType ?? 'application/json',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': deliverOptions.signature ?? sign(body, timestamp, deliverOptions.secret ?? signingSecret),
        'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      };
      if (deliverOptions.retryNum !== undefined) {
        headers['x-slack-retry-num'] = String(deliverOptions.retryNum);
        headers['x-slack-retry-reason'] = 'http_timeout';
      }
      const response = await fetch(url, { method: 'POST', headers, body });
      return { status: response.status, body: await response.text(), headers: response.headers };
    },
    say: async (sayOptions) => {
      const message = store(sayOptions.channel, {
        ts: nextTs(),
        user: sayOptions.user,
        text: sayOptions.text,
        ...(sayOptions.bot_id ? { bot_id: sayOptions.bot_id } : {}),
        ...(sayOptions.thread_ts ? { thread_ts: sayOptions.thread_ts } : {}),
      });
      const bodies = [fake.eventBody('message', message, sayOptions.channel)];
      if ((sayOptions.app_mention ?? true) && message.text.includes(`<@${bot.user_id}>`)) {
        bodies.unshift(fake.eventBody('app_mention', message, sayOptions.channel));
      }
      const deliveries: Delivery[] = [];
      for (const body of bodies) {
        if (sayOptions.via === 'socket') {
          if (!socket) throw new Error('fake slack: no Socket Mode connection');
          const envelopeId = randomBytes(8).toString('hex');
          socket.send(
            JSON.stringify({ envelope_id: envelopeId, type: 'events_api', payload: body, accepts_response_payload: false, retry_attempt: 0, retry_reason: '' }),
          );
          deliveries.push({ status: 0, body: envelopeId, headers: new Headers() });
        } else {
          deliveries.push(await fake.deliver(JSON.stringify(body)));
        }
      }
      return { message, deliveries };
    },
    clickButton: async (click) => {
      if (fake.eventsUrl === null) throw new Error('fake slack: set eventsUrl first');
      const payload = {
        type: 'block_actions',
        team: { id: bot.team_id },
        user: { id: click.user, name: users.get(click.user)?.name ?? click.user },
        api_app_id: 'A0FAKE01',
        container: { type: 'message', message_ts: click.message_ts, channel_id: click.channel, is_ephemeral: false },
        trigger_id: randomBytes(6).toString('hex'),
        channel: { id: click.channel, name: channels.get(click.channel)?.name ?? click.channel },
        message: { ts: click.message_ts, ...(click.thread_ts ? { thread_ts: click.thread_ts } : {}) },
        response_url: `http://127.0.0.1:${port}/actions/response`,
        actions: [{ type: 'button', action_id: click.action_id, block_id: 'approval', value: click.value, action_ts: nextTs() }],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return fake.deliver(body, { contentType: 'application/x-www-form-urlencoded', url: `${fake.eventsUrl}/interactivity` });
    },
    whenSocketConnected: () => (socket ? Promise.resolve() : new Promise((resolve) => socketWaiters.push(resolve))),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
