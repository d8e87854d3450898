/**
 * Inbound Slack requests: verified on their raw bytes (v0 signature,
 * five-minute window on the runtime clock) before anything is parsed,
 * deduplicated (the event id covers `X-Slack-Retry-Num` redeliveries; the
 * message key covers the `app_mention` + `message` pair Slack sends for one
 * mention), acknowledged at once and routed to the channel's bindings in the
 * background; button clicks on approval messages answer the run's approval.
 */
import type { Logger } from 'pino';
import type { InboundMessage } from '../../actors/binding.machine.js';
import type { SocketInput } from '../../actors/channel-socket.machine.js';
import type { NetPort } from '../../connectors/contract.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import { dayOf, isoAt, type RuntimeClock } from '../../runtime/clock.js';
import type { ChannelDoc } from './documents.js';
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { UniqueViolation, asOrgId, type OrgId } from '../../runtime/store/types.js';
import { APPROVE_ACTION, DENY_ACTION, approverOf, decidedBlocks } from './approvals.js';
import { clientFor } from './binding-runs.js';
import type { ChannelActors } from './channel-actors.js';
import type { ChannelCredentials } from './credentials.js';
import { blockActionsSchema, eventCallbackSchema, messageOf, slackEnvelopeSchema, type EventCallback } from './slack-events.js';
import { checkSlackSignature } from './slack-signature.js';

/** days an inbound event key is kept for deduplication (Slack retries within the hour; stale signatures are refused after 5 minutes) */
const EVENT_KEY_DAYS = 2;
/** how far back the daily sweep looks for older keys */
const SWEEP_LOOKBACK_DAYS = 60;

const SIGNATURE_MESSAGES = {
  missing: 'X-Slack-Signature and X-Slack-Request-Timestamp are required',
  stale: 'X-Slack-Request-Timestamp is more than five minutes away from now (a replayed or delayed request)',
  mismatch: 'X-Slack-Signature does not match the body signed with the channel signing secret',
} as const;

/** What an inbound request answers (the route serializes it). */
export interface InboundAnswer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

export interface InboundRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface SlackInboundDependencies {
  readonly collections: Collections;
  readonly agentRuntime: AgentRuntime;
  readonly actors: ChannelActors;
  readonly logger: Logger;
  readonly egress: NetPort;
  readonly clock: Pick<RuntimeClock, 'now'>;
  readonly credentialsOf: (org: OrgId, channel: ChannelDoc) => ChannelCredentials;
  /** background work, awaited at shutdown */
  readonly track: (work: Promise<unknown>) => void;
}

export const isAnswering = (channel: ChannelDoc): boolean => channel.is_active && channel.response_mode !== 'disabled';

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ServiceError('invalid_json', 'the request body is not valid JSON');
  }
}

export class SlackInbound {
  /** `<channel id>:<chat channel id>` -> chat channel name (conversations.info), null when it could not be read */
  private readonly chatNames = new Map<string, string | null>();
  /** organization -> the UTC day its old event keys were last swept */
  private readonly swept = new Map<string, string>();

  constructor(private readonly deps: SlackInboundDependencies) {}

  /** `POST /chat/incoming/slack/:channel_id`: Events API requests. */
  async handleEvent(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
    const { org, channel, credentials } = await this.verified(channelId, request);
    const envelope = slackEnvelopeSchema.safeParse(parseJson(request.body));
    if (!envelope.success) return { status: 200, json: { ok: true, status: 'ignored', reason: 'unsupported_request' } };
    if (envelope.data.type === 'url_verification') return { status: 200, json: { challenge: envelope.data.challenge } };
    if (!isAnswering(channel)) return { status: 200, json: { ok: true, status: 'ignored', reason: 'channel_disabled' } };
    const retryNum = request.headers['x-slack-retry-num'];
    const status = await this.accept(org, channel, credentials, envelope.data, retryNum === undefined ? undefined : Number(retryNum));
    return { status: 200, json: { ok: true, status } };
  }

  /** An events_api envelope that came over Socket Mode (already acknowledged). */
  async socketEvent(input: SocketInput, body: unknown, retryNum: number | undefined): Promise<void> {
    const org = asOrgId(input.orgId);
    const callback = eventCallbackSchema.safeParse(body);
    if (!callback.success) return;
    const channel = await this.deps.collections.channels.get(org, input.channelId);
    if (!channel?.connection || !isAnswering(channel)) return;
    await this.accept(org, channel, this.deps.credentialsOf(org, channel), callback.data, retryNum);
  }

  /** `POST /chat/incoming/slack/:channel_id/interactivity`: button clicks on approval messages. */
  async handleInteraction(channelId: string, request: InboundRequest): Promise<InboundAnswer> {
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
    if ((await agentRuntime.answer(org, approvalId, approved, approver)) !== 'accepted') {
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

  /** Drops the cached chat channel names of a channel (reload). */
  forgetNames(channelId: string): void {
    for (const key of [...this.chatNames.keys()]) if (key.startsWith(`${channelId}:`)) this.chatNames.delete(key);
  }

  /** The channel of an inbound request, with the signature checked before the body is read. */
  private async verified(channelId: string, request: InboundRequest): Promise<{ org: OrgId; channel: ChannelDoc; credentials: ChannelCredentials }> {
    const [found] = await this.deps.collections.channels.findAcrossOrgs({ id: channelId }, 1);
    if (!found || found.channel_type !== 'slack') throw new ServiceError('not_found', `channel ${channelId} not found`);
    const org = found.org_id;
    if (!found.connection) throw new ServiceError('not_found', `channel ${channelId} is not connected`);
    const credentials = this.deps.credentialsOf(org, found);
    const check = checkSlackSignature(credentials.signing_secret, request.headers, request.body, this.deps.clock.now());
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
    this.deps.track(this.route(channel, credentials, inbound));
    return 'accepted';
  }

  private async route(channel: ChannelDoc, credentials: ChannelCredentials, inbound: Omit<InboundMessage, 'chatChannelName'>): Promise<void> {
    if (!this.deps.actors.hasBindings(channel.id)) return;
    const chatChannelName = await this.chatChannelName(channel, credentials, inbound.chatChannelId);
    this.deps.actors.deliver(channel.id, { ...inbound, chatChannelName });
  }

  /** true the first time a key is seen for the channel (a unique index makes it atomic) */
  private async firstTime(org: OrgId, channelId: string, key: string): Promise<boolean> {
    const now = this.deps.clock.now();
    await this.sweepKeys(org, now);
    try {
      await this.deps.collections.channelEvents.insert(org, { channel_id: channelId, key, received_at: isoAt(now), day: dayOf(now) });
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
}
