/**
 * The channel runtime: inbound chat events in, binding actors deciding, agent
 * runs out. Routes stay thin; everything about chat channels happens here.
 *
 * - Every binding is a `channel_binding` actor under the supervisor (started
 *   at boot, on create, updated on change, stopped on delete); a Socket Mode
 *   connection is a `channel_socket` actor.
 * - Inbound Slack requests are verified on their raw bytes (v0 signature,
 *   five-minute window) before anything is parsed, deduplicated (the event id
 *   covers `X-Slack-Retry-Num` redeliveries; the message key covers the
 *   `app_mention` + `message` pair Slack sends for one mention), acknowledged
 *   at once, and routed asynchronously.
 * - Per channel and per user rate limits guard the LLM spend.
 */
import type { Logger } from 'pino';
import type { NetPort } from '../../connectors/contract.js';
import { bindingMachine, type BindingRule, type InboundMessage } from '../../actors/binding.machine.js';
import { createSlackClient } from './slack-client.js';
import { checkSlackToken } from './slack-scopes.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { BindingDoc, ChannelConnection, ChannelDoc } from './documents.js';
import type { Collections } from '../collections.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { ServiceError, conflict } from '../../runtime/errors.js';
import type { SourceDirectory } from '../sources/directory.js';
import { UniqueViolation, asOrgId, type OrgId } from '../../runtime/store/types.js';
import type { Supervisor } from '../../runtime/supervisor.js';
import { APPROVE_ACTION, DENY_ACTION, approverOf, decidedBlocks } from './approvals.js';
import { BindingRuns, clientFor } from './binding-runs.js';
import { ChannelSealer, type ChannelCredentials } from './credentials.js';
import { SlidingWindowLimiter, rateLimitsOf } from './rate-limiter.js';
import { blockActionsSchema, eventCallbackSchema, messageOf, slackEnvelopeSchema, type EventCallback } from './slack-events.js';
import { checkSlackSignature } from './slack-signature.js';
import { CHANNEL_SOCKET_KIND, socketMachine, type SocketInput } from './socket-mode.js';

export const CHANNEL_BINDING_KIND = 'channel_binding';
/** bindings and channels started at boot, per kind */
const MAX_BOOT_RECORDS = 100_000;
/** days an inbound event key is kept for deduplication (Slack retries within the hour; stale signatures are refused after 5 minutes) */
const EVENT_KEY_DAYS = 2;
/** how far back the daily sweep looks for older keys */
const SWEEP_LOOKBACK_DAYS = 60;

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export interface ChannelRuntimeDependencies {
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  readonly agentRuntime: AgentRuntime;
  readonly sources: SourceDirectory;
  readonly config: ServiceConfig;
  readonly logger: Logger;
  /** the egress guard: tenant LLM base URLs and Slack API base URLs are reached through it */
  readonly egress: NetPort;
}

/** What an inbound request answers (the route serializes it). */
export interface InboundAnswer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

export interface InboundRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The result of the channel test action. */
export interface ChannelCheck {
  readonly ok: boolean;
  readonly message: string | null;
  readonly details: Record<string, unknown>;
}

export interface ConnectInput {
  readonly bot_token: string;
  readonly signing_secret: string;
  readonly app_token?: string | undefined;
  readonly api_base_url?: string | undefined;
}

const socketActorId = (channelId: string): string => `sock_${channelId}`;

const SIGNATURE_MESSAGES = {
  missing: 'X-Slack-Signature and X-Slack-Request-Timestamp are required',
  stale: 'X-Slack-Request-Timestamp is more than five minutes away from now (a replayed or delayed request)',
  mismatch: 'X-Slack-Signature does not match the body signed with the channel signing secret',
} as const;

export class ChannelRuntime {
  private readonly sealer: ChannelSealer;
  private readonly runs: BindingRuns;
  private readonly limiter: SlidingWindowLimiter;
  /** channel id -> ids of its binding actors */
  private readonly bindingsOf = new Map<string, Set<string>>();
  /** `<channel id>:<chat channel id>` -> chat channel name (conversations.info), null when it could not be read */
  private readonly chatNames = new Map<string, string | null>();
  /** organization -> the UTC day its old event keys were last swept */
  private readonly swept = new Map<string, string>();
  /** routing and run starts in flight (awaited at shutdown) */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: ChannelRuntimeDependencies) {
    this.sealer = new ChannelSealer(deps.config.auth.jwtSecret);
    this.runs = new BindingRuns(deps);
    this.limiter = new SlidingWindowLimiter(() => deps.supervisor.clock.now());
    deps.supervisor.registerKind({
      kind: CHANNEL_BINDING_KIND,
      logic: bindingMachine.provide({
        actions: { dispatch: (_args, params) => this.track(this.dispatch(params.rule, params.message)) },
      }),
      // a binding holds no state worth losing: start it again from its rule
      policy: { onFailure: 'restart', maxRestarts: 5 },
      shutdownEvent: { type: 'STOP' },
      drain: () => this.drain(),
    });
    deps.supervisor.registerKind({
      kind: CHANNEL_SOCKET_KIND,
      logic: socketMachine((input, body, retryNum) => this.track(this.onSocketEvent(input, body, retryNum)), deps.logger, deps.egress),
      policy: { onFailure: 'restart', maxRestarts: 3 },
      shutdownEvent: { type: 'STOP' },
    });
  }

  /** Starts an actor for every stored binding and every Socket Mode channel. */
  async start(): Promise<void> {
    const { collections } = this.deps;
    for (const binding of await collections.bindings.findAcrossOrgs({}, MAX_BOOT_RECORDS)) this.spawnBinding(binding.org_id, binding);
    for (const channel of await collections.channels.findAcrossOrgs({ is_active: true }, MAX_BOOT_RECORDS)) {
      if (channel.connection?.socket_mode) this.spawnSocket(channel.org_id, channel);
    }
  }

  // ---- credentials and connection ----------------------------------------------------------

  sealCredentials(org: OrgId, channelId: string, credentials: ChannelCredentials): string {
    return this.sealer.seal(org, channelId, credentials);
  }

  credentialsOf(org: OrgId, channel: ChannelDoc): ChannelCredentials {
    if (!channel.connection) throw conflict('the channel is not connected yet: POST /channels/:id/connect first', { channel_id: channel.id });
    return this.sealer.unseal(org, channel.id, channel.connection.credentials_sealed);
  }

  /** Checks the tokens against Slack (auth.test, scopes) and builds the connection to store. */
  async connect(org: OrgId, channel: ChannelDoc, input: ConnectInput): Promise<{ connection: ChannelConnection; check: ChannelCheck }> {
    const apiBaseUrl = input.api_base_url ?? null;
    const result = await checkSlackToken(createSlackClient({ bot_token: input.bot_token, base_url: apiBaseUrl }, this.deps.egress));
    const details = result.details ?? {};
    if (!result.identity) {
      if (details['reason'] === 'egress_refused') throw new ServiceError('egress_refused', result.message ?? 'api_base_url is refused', details);
      throw new ServiceError('source_validation_failed', `Slack refused the bot token: ${result.message ?? 'auth.test failed'}`, details);
    }
    const connection: ChannelConnection = {
      kind: 'tokens',
      status: 'connected',
      credentials_sealed: this.sealer.seal(org, channel.id, {
        bot_token: input.bot_token,
        signing_secret: input.signing_secret,
        app_token: input.app_token ?? null,
      }),
      api_base_url: apiBaseUrl,
      socket_mode: input.app_token !== undefined,
      team_id: result.identity.team_id,
      bot_user_id: result.identity.bot_user_id,
      bot_id: result.identity.bot_id,
      scopes: [...result.identity.scopes],
      connected_at: new Date().toISOString(),
    };
    return { connection, check: { ok: result.ok, message: result.message ?? null, details } };
  }

  /** The test action: the stored tokens and the bot's scopes, checked against Slack now. */
  async test(org: OrgId, channel: ChannelDoc): Promise<ChannelCheck> {
    const result = await checkSlackToken(clientFor(channel, this.credentialsOf(org, channel), this.deps.egress));
    return { ok: result.ok, message: result.message ?? null, details: result.details ?? {} };
  }

  /** Re-reads the channel and its bindings: actors updated, Socket Mode reconnected, caches dropped. */
  async reload(org: OrgId, channel: ChannelDoc): Promise<{ bindings: number; socket_mode: boolean }> {
    for (const key of [...this.chatNames.keys()]) if (key.startsWith(`${channel.id}:`)) this.chatNames.delete(key);
    const bindings = await this.deps.collections.bindings.findAll(org, { channel_id: channel.id });
    for (const binding of bindings) this.bindingSaved(org, binding);
    await this.stopActor(socketActorId(channel.id));
    const socketMode = channel.is_active && channel.connection?.socket_mode === true;
    if (socketMode) this.spawnSocket(org, channel);
    return { bindings: bindings.length, socket_mode: socketMode };
  }

  /** The channel is going away: its socket and binding actors stop. */
  async channelRemoved(channelId: string): Promise<void> {
    await this.stopActor(socketActorId(channelId));
    for (const bindingId of this.bindingsOf.get(channelId) ?? []) await this.stopActor(bindingId);
    this.bindingsOf.delete(channelId);
  }

  // ---- binding actors ------------------------------------------------------------------------

  /** A binding was created or changed: its actor starts or takes the new rule. */
  bindingSaved(org: OrgId, binding: BindingDoc): void {
    const rule = ruleOf(org, binding);
    if (this.deps.supervisor.get(binding.id)) this.deps.supervisor.send(binding.id, { type: 'UPDATE', rule });
    else this.spawnBinding(org, binding);
    for (const [channelId, ids] of this.bindingsOf) if (channelId !== binding.channel_id) ids.delete(binding.id);
    this.bindingIds(binding.channel_id).add(binding.id);
  }

  async bindingRemoved(binding: BindingDoc): Promise<void> {
    this.bindingsOf.get(binding.channel_id)?.delete(binding.id);
    await this.stopActor(binding.id);
  }

  // ---- inbound -------------------------------------------------------------------------------

  /** `POST /chat/incoming/slack/:channel_id`: Events API requests. */
  async handleSlackEvent(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
    const { org, channel, credentials } = await this.verified(channelId, request);
    const envelope = slackEnvelopeSchema.safeParse(parseJson(request.body));
    if (!envelope.success) return { status: 200, json: { ok: true, status: 'ignored', reason: 'unsupported_request' } };
    if (envelope.data.type === 'url_verification') return { status: 200, json: { challenge: envelope.data.challenge } };
    if (!isAnswering(channel)) return { status: 200, json: { ok: true, status: 'ignored', reason: 'channel_disabled' } };
    const retryNum = request.headers['x-slack-retry-num'];
    const status = await this.accept(org, channel, credentials, envelope.data, retryNum === undefined ? undefined : Number(retryNum));
    return { status: 200, json: { ok: true, status } };
  }

  /** `POST /chat/incoming/slack/:channel_id/interactivity`: button clicks on approval messages. */
  async handleSlackInteraction(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
    const { org, channel, credentials } = await this.verified(channelId, request);
    const raw = new URLSearchParams(request.body.toString('utf8')).get('payload');
    const parsed = blockActionsSchema.safeParse(raw === null ? null : parseJson(Buffer.from(raw)));
    if (!parsed.success) return { status: 200, json: { ok: true, status: 'ignored', reason: 'unsupported_payload' } };
    const payload = parsed.data;
    const action = payload.actions[0];
    if (!action || (action.action_id !== APPROVE_ACTION && action.action_id !== DENY_ACTION) || action.value === undefined) {
      return { status: 200, json: { ok: true, status: 'ignored', reason: 'unknown_action' } };
    }
    const approved = action.action_id === APPROVE_ACTION;
    const approvalId = action.value;
    const slackUser = payload.user.id;
    const chatChannel = payload.channel?.id ?? payload.container?.channel_id ?? '';
    const messageTs = payload.container?.message_ts ?? payload.message?.ts ?? null;
    const client = clientFor(channel, credentials, this.deps.egress);
    const ephemeral = async (text: string): Promise<void> => {
      await client.chat.postEphemeral({ channel: chatChannel, user: slackUser, text }).catch((error: unknown) => {
        this.deps.logger.warn({ err: error, channel: channel.id }, 'could not post an ephemeral message to Slack');
      });
    };
    const { agentRuntime, collections } = this.deps;
    const runId = agentRuntime.pendingApproval(org, approvalId);
    const run = runId === undefined ? null : await collections.agentRuns.get(org, runId);
    if (!run || run.input['channel_id'] !== channel.id) {
      await ephemeral('This approval is no longer waiting for an answer.');
      return { status: 200, json: { ok: true, status: 'not_pending' } };
    }
    const approver = await approverOf(collections, org, client, slackUser);
    if (approver === null) {
      await ephemeral('You are not allowed to answer this approval: only members of the organization who may use chat can.');
      return { status: 200, json: { ok: true, status: 'refused' } };
    }
    if (agentRuntime.answer(org, approvalId, approved, approver) !== 'accepted') {
      await ephemeral('This approval is no longer waiting for an answer.');
      return { status: 200, json: { ok: true, status: 'not_pending' } };
    }
    if (messageTs !== null) {
      const { text, blocks } = decidedBlocks(approved, slackUser);
      await client.chat.update({ channel: chatChannel, ts: messageTs, text, blocks: blocks as never }).catch((error: unknown) => {
        this.deps.logger.warn({ err: error, channel: channel.id }, 'could not update the approval message');
      });
    }
    return { status: 200, json: { ok: true, status: approved ? 'approved' : 'denied' } };
  }

  /** Resolves when routing and run starts in flight are done (tests and shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** The channel of an inbound request, with the signature checked before the body is read. */
  private async verified(channelId: string, request: InboundRequest): Promise<{ org: OrgId; channel: ChannelDoc; credentials: ChannelCredentials }> {
    const [found] = await this.deps.collections.channels.findAcrossOrgs({ id: channelId }, 1);
    if (!found || found.channel_type !== 'slack') throw new ServiceError('not_found', `channel ${channelId} not found`);
    const org = found.org_id;
    if (!found.connection) throw new ServiceError('not_found', `channel ${channelId} is not connected`);
    const credentials = this.credentialsOf(org, found);
    const check = checkSlackSignature(credentials.signing_secret, request.headers, request.body, Date.now());
    if (check !== 'ok') throw new ServiceError('bad_signature', SIGNATURE_MESSAGES[check], { reason: check });
    return { org, channel: found, credentials };
  }

  /** Deduplicates, then routes in the background; answers at once. */
  private async accept(
    org: OrgId,
    channel: ChannelDoc,
    credentials: ChannelCredentials,
    callback: EventCallback,
    retryNum: number | undefined,
  ): Promise<'accepted' | 'duplicate' | 'ignored'> {
    const message = messageOf(callback);
    const keys = [`event:${callback.event_id}`, ...(message ? [`message:${message.channel}:${message.ts}`] : [])];
    for (const key of keys) {
      if (!(await this.firstTime(org, channel.id, key))) {
        this.deps.logger.debug({ channel: channel.id, key, retry_num: retryNum ?? 0 }, 'duplicate chat event ignored');
        return 'duplicate';
      }
    }
    if (!message) return 'ignored';
    const botUserId = channel.connection?.bot_user_id ?? null;
    const inbound = {
      channelId: channel.id,
      chatChannelId: message.channel,
      user: message.user ?? null,
      botId: message.bot_id ?? null,
      fromSelf: (botUserId !== null && message.user === botUserId) || (message.bot_id !== undefined && message.bot_id === channel.connection?.bot_id),
      mentioned: message.type === 'app_mention' || (botUserId !== null && message.text.includes(`<@${botUserId}>`)),
      text: message.text,
      ts: message.ts,
      threadTs: message.thread_ts ?? null,
    };
    this.track(this.route(channel, credentials, inbound));
    return 'accepted';
  }

  private async route(channel: ChannelDoc, credentials: ChannelCredentials, inbound: Omit<InboundMessage, 'chatChannelName'>): Promise<void> {
    const ids = this.bindingsOf.get(channel.id);
    if (!ids || ids.size === 0) return;
    const chatChannelName = await this.chatChannelName(channel, credentials, inbound.chatChannelId);
    const message: InboundMessage = { ...inbound, chatChannelName };
    for (const id of ids) this.deps.supervisor.send(id, { type: 'MESSAGE', message });
  }

  /** A binding took a message: limits, then the run. */
  private async dispatch(rule: BindingRule, message: InboundMessage): Promise<void> {
    const org = asOrgId(rule.orgId);
    const { collections } = this.deps;
    const [channel, binding] = await Promise.all([collections.channels.get(org, rule.channelId), collections.bindings.get(org, rule.bindingId)]);
    if (!channel || !binding || !channel.connection || !isAnswering(channel)) return;
    const credentials = this.credentialsOf(org, channel);
    const limits = rateLimitsOf(channel.filter_config);
    const channelKey = `channel:${channel.id}`;
    const userKey = `user:${channel.id}:${message.user ?? message.botId ?? 'unknown'}`;
    if (!this.limiter.take(channelKey, limits.per_channel_per_minute)) {
      return this.refuseForRate(channel, credentials, message, 'This channel has reached its limit of questions per minute; try again shortly.');
    }
    if (!this.limiter.take(userKey, limits.per_user_per_minute)) {
      this.limiter.release(channelKey);
      return this.refuseForRate(channel, credentials, message, 'You have reached your limit of questions per minute here; try again shortly.');
    }
    try {
      await this.runs.start({ org, channel, binding, credentials, message });
    } catch (error) {
      this.deps.logger.error({ err: error, binding: binding.id }, 'could not start the run of a channel binding');
    }
  }

  private async refuseForRate(channel: ChannelDoc, credentials: ChannelCredentials, message: InboundMessage, text: string): Promise<void> {
    this.deps.logger.info({ channel: channel.id, user: message.user }, 'channel rate limit reached: no run');
    if (message.user === null) return;
    await clientFor(channel, credentials, this.deps.egress)
      .chat.postEphemeral({ channel: message.chatChannelId, user: message.user, text, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) })
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'could not post the rate-limit notice'));
  }

  private async onSocketEvent(input: SocketInput, body: unknown, retryNum: number | undefined): Promise<void> {
    const org = asOrgId(input.orgId);
    const callback = eventCallbackSchema.safeParse(body);
    if (!callback.success) return;
    const channel = await this.deps.collections.channels.get(org, input.channelId);
    if (!channel?.connection || !isAnswering(channel)) return;
    await this.accept(org, channel, this.credentialsOf(org, channel), callback.data, retryNum);
  }

  /** true the first time a key is seen for the channel (a unique index makes it atomic) */
  private async firstTime(org: OrgId, channelId: string, key: string): Promise<boolean> {
    const now = this.deps.supervisor.clock.now();
    await this.sweepKeys(org, now);
    try {
      await this.deps.collections.channelEvents.insert(org, { channel_id: channelId, key, received_at: new Date(now).toISOString(), day: dayOf(now) });
      return true;
    } catch (error) {
      if (error instanceof UniqueViolation) return false;
      throw error;
    }
  }

  /** Once a day per organization: event keys older than EVENT_KEY_DAYS are deleted. */
  private async sweepKeys(org: OrgId, now: number): Promise<void> {
    const today = dayOf(now);
    if (this.swept.get(org) === today) return;
    this.swept.set(org, today);
    const old = Array.from({ length: SWEEP_LOOKBACK_DAYS }, (_, index) => dayOf(now - (EVENT_KEY_DAYS + index) * 86_400_000));
    await this.deps.collections.channelEvents.deleteWhere(org, { day: { in: old } });
  }

  private async chatChannelName(channel: ChannelDoc, credentials: ChannelCredentials, chatChannelId: string): Promise<string | null> {
    const key = `${channel.id}:${chatChannelId}`;
    if (this.chatNames.has(key)) return this.chatNames.get(key) ?? null;
    let name: string | null = null;
    try {
      const answer = await clientFor(channel, credentials, this.deps.egress).conversations.info({ channel: chatChannelId });
      name = answer.channel?.name ?? null;
      this.chatNames.set(key, name);
    } catch (error) {
      // not cached: the next message asks again
      this.deps.logger.warn({ err: error, channel: channel.id, chat_channel: chatChannelId }, 'could not resolve the chat channel name');
    }
    return name;
  }

  private spawnBinding(org: OrgId, binding: BindingDoc): void {
    this.bindingIds(binding.channel_id).add(binding.id);
    this.deps.supervisor.spawn(CHANNEL_BINDING_KIND, { id: binding.id, input: ruleOf(org, binding), orgId: org });
  }

  private spawnSocket(org: OrgId, channel: ChannelDoc): void {
    const credentials = this.credentialsOf(org, channel);
    if (credentials.app_token === null) return;
    const input: SocketInput = { orgId: org, channelId: channel.id, appToken: credentials.app_token, apiBaseUrl: channel.connection?.api_base_url ?? null };
    this.deps.supervisor.spawn(CHANNEL_SOCKET_KIND, { id: socketActorId(channel.id), input, orgId: org });
  }

  private async stopActor(id: string): Promise<void> {
    if (!this.deps.supervisor.send(id, { type: 'STOP' })) return;
    await this.deps.supervisor.whenFinished(id);
  }

  private bindingIds(channelId: string): Set<string> {
    let ids = this.bindingsOf.get(channelId);
    if (!ids) {
      ids = new Set();
      this.bindingsOf.set(channelId, ids);
    }
    return ids;
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => this.deps.logger.error({ err: error }, 'chat channel work failed'));
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }
}

const isAnswering = (channel: ChannelDoc): boolean => channel.is_active && channel.response_mode !== 'disabled';

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ServiceError('invalid_json', 'the request body is not valid JSON');
  }
}

export function ruleOf(org: OrgId, binding: BindingDoc): BindingRule {
  return {
    orgId: org,
    bindingId: binding.id,
    channelId: binding.channel_id,
    chatChannel: binding.match_rule.slack_channel === null ? null : binding.match_rule.slack_channel.replace(/^#/, '').toLowerCase(),
    mentioned: binding.match_rule.mentioned,
    allowBots: binding.allow_bots,
    enabled: binding.enabled,
  };
}
