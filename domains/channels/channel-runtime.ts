/**
 * The channel runtime: inbound chat events in, binding actors deciding, agent
 * runs out. Routes stay thin; everything about chat channels happens here,
 * in three parts:
 * - the actors (`channel-actors.ts`): a `channel_binding` actor per binding
 *   and a `channel_socket` actor per Socket Mode connection;
 * - the inbound side (`slack-inbound.ts`): verified, deduplicated Slack
 *   requests routed to the bindings, approval buttons answered;
 * - this module: connecting a channel, and what a binding does with a
 *   message it took (per channel and per user rate limits guard the LLM
 *   spend, then the run starts through `binding-runs.ts`).
 */
import type { Logger } from 'pino';
import type { BindingRule, InboundMessage } from '../../actors/binding.machine.js';
import type { NetPort } from '../../connectors/contract.js';
import { createSlackClient } from './slack-client.js';
import { checkSlackToken } from './slack-scopes.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import { isoAt } from '../../runtime/clock.js';
import type { BindingDoc, ChannelConnection, ChannelDoc } from './documents.js';
import type { Collections } from '../collections.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { ServiceError, conflict } from '../../runtime/errors.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
import type { Supervisor } from '../../runtime/supervisor.js';
import { BindingRuns, clientFor } from './binding-runs.js';
import { ChannelActors } from './channel-actors.js';
import { ChannelSealer, type ChannelCredentials } from './credentials.js';
import { SlidingWindowLimiter, rateLimitsOf } from './rate-limiter.js';
import { SlackInbound, isAnswering, type InboundAnswer, type InboundRequest } from './slack-inbound.js';

export type { InboundAnswer, InboundRequest } from './slack-inbound.js';

/** bindings and channels started at boot, per kind */
const MAX_BOOT_RECORDS = 100_000;

export interface ChannelRuntimeDependencies {
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  readonly agentRuntime: AgentRuntime;
  /** starts the bindings' agent runs */
  readonly launcher: AgentRunLauncher;
  readonly config: ServiceConfig;
  readonly logger: Logger;
  /** the egress guard: tenant LLM base URLs and Slack API base URLs are reached through it */
  readonly egress: NetPort;
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

export class ChannelRuntime {
  private readonly sealer: ChannelSealer;
  private readonly runs: BindingRuns;
  private readonly limiter: SlidingWindowLimiter;
  private readonly actors: ChannelActors;
  private readonly inbound: SlackInbound;
  /** routing and run starts in flight (awaited at shutdown) */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: ChannelRuntimeDependencies) {
    const clock = deps.supervisor.clock;
    this.sealer = new ChannelSealer(deps.config.auth.jwtSecret);
    this.runs = new BindingRuns(deps, (org, channel) => this.credentialsOf(org, channel));
    this.limiter = new SlidingWindowLimiter(() => clock.now());
    this.actors = new ChannelActors({
      supervisor: deps.supervisor,
      logger: deps.logger,
      egress: deps.egress,
      dispatch: (rule, message) => this.track(this.dispatch(rule, message)),
      onSocketEvent: (input, body, retryNum) => this.track(this.inbound.socketEvent(input, body, retryNum)),
      drain: () => this.drain(),
    });
    this.inbound = new SlackInbound({
      collections: deps.collections,
      agentRuntime: deps.agentRuntime,
      actors: this.actors,
      logger: deps.logger,
      egress: deps.egress,
      clock,
      credentialsOf: (org, channel) => this.credentialsOf(org, channel),
      track: (work) => this.track(work),
    });
  }

  /** Starts an actor for every stored binding and every Socket Mode channel. */
  async start(): Promise<void> {
    const { collections } = this.deps;
    for (const binding of await collections.bindings.findAcrossOrgs({}, MAX_BOOT_RECORDS)) this.actors.spawnBinding(binding.org_id, binding);
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
      connected_at: isoAt(this.deps.supervisor.clock.now()),
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
    this.inbound.forgetNames(channel.id);
    const bindings = await this.deps.collections.bindings.findAll(org, { channel_id: channel.id });
    for (const binding of bindings) this.actors.bindingSaved(org, binding);
    await this.actors.stopSocket(channel.id);
    const socketMode = channel.is_active && channel.connection?.socket_mode === true;
    if (socketMode) this.spawnSocket(org, channel);
    return { bindings: bindings.length, socket_mode: socketMode };
  }

  /** The channel is going away: its socket and binding actors stop. */
  channelRemoved(channelId: string): Promise<void> {
    return this.actors.channelRemoved(channelId);
  }

  /** The Socket Mode actor's state and, once failed, why (null when none is live). */
  socketState(channelId: string): { readonly state: string; readonly failure: string | null } | null {
    return this.actors.socketState(channelId);
  }

  // ---- binding actors ------------------------------------------------------------------------

  /** A binding was created or changed: its actor starts or takes the new rule. */
  bindingSaved(org: OrgId, binding: BindingDoc): void {
    this.actors.bindingSaved(org, binding);
  }

  bindingRemoved(binding: BindingDoc): Promise<void> {
    return this.actors.bindingRemoved(binding);
  }

  // ---- inbound -------------------------------------------------------------------------------

  /** `POST /chat/incoming/slack/:channel_id`: Events API requests. */
  handleSlackEvent(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
    return this.inbound.handleEvent(channelId, request);
  }

  /** `POST /chat/incoming/slack/:channel_id/interactivity`: button clicks on approval messages. */
  handleSlackInteraction(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
    return this.inbound.handleInteraction(channelId, request);
  }

  /** Resolves when routing and run starts in flight are done (tests and shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  // ---- internals -----------------------------------------------------------------------------

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

  private spawnSocket(org: OrgId, channel: ChannelDoc): void {
    const credentials = this.credentialsOf(org, channel);
    if (credentials.app_token === null) return;
    this.actors.spawnSocket({ orgId: org, channelId: channel.id, appToken: credentials.app_token, apiBaseUrl: channel.connection?.api_base_url ?? null });
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => this.deps.logger.error({ err: error }, 'chat channel work failed'));
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }
}
