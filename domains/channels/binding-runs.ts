/**
 * Starting the agent run for a message a binding took, and everything that
 * goes back to the thread: the reply (the slack connector's `post_message`),
 * approval requests with buttons, and a short notice when no run can start.
 *
 * The conversation of a thread is the thread itself: a follow-up mention
 * reads the thread's earlier messages (conversations.replies) as the run's
 * history, so the same thread continues the same conversation.
 */
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import type { InboundMessage } from '../../actors/binding.machine.js';
import type { RunEnd } from '../../actors/agent-run.types.js';
import type { RunFeed } from '../../runtime/agent/run-feed.js';
import type { CatalogSource } from '../../runtime/tools/catalog.js';
import type { NetPort } from '../../connectors/contract.js';
import { ToolError } from '../../connectors/contract.js';
import { createSlackClient, postMessageTool } from './slack-client.js';
import type { AgentRunLauncher, PreparedRun } from '../agents/start-agent-run.js';
import type { BindingDoc, ChannelDoc } from './documents.js';
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import type { ChatMessage } from '../../runtime/llm/types.js';
import type { OrgId } from '../../runtime/store/types.js';
import { approvalBlocks } from './approvals.js';
import type { ChannelCredentials } from './credentials.js';
import { READ_ONLY_NOTICE } from './read-only.js';

/** earlier thread messages given to the model */
const MAX_THREAD_MESSAGES = 50;

export interface BindingRunDependencies {
  readonly collections: Collections;
  readonly launcher: AgentRunLauncher;
  readonly logger: Logger;
  /** the egress guard: Slack API base URLs are reached through it */
  readonly egress: NetPort;
}

/** What one run needs to know about where it was asked. */
export interface RunRequest {
  readonly org: OrgId;
  readonly channel: ChannelDoc;
  readonly binding: BindingDoc;
  readonly credentials: ChannelCredentials;
  readonly message: InboundMessage;
}

/** The channel's own slack source: the reply tool and the thread tools of the run use the channel's bot. */
function channelSource(channel: ChannelDoc, credentials: ChannelCredentials): CatalogSource {
  return {
    id: channel.id,
    kind: 'slack',
    name: channel.instance_name,
    config: { bot_token: credentials.bot_token, ...(channel.connection?.api_base_url ? { base_url: channel.connection.api_base_url } : {}) },
  };
}

/** `net`: the egress guard (api_base_url is the tenant's) */
export const clientFor = (channel: ChannelDoc, credentials: ChannelCredentials, net: NetPort): WebClient =>
  createSlackClient({ bot_token: credentials.bot_token, base_url: channel.connection?.api_base_url ?? null }, net);

/** `<@U123>` mentions of the bot are noise for the model */
const withoutMention = (text: string, botUserId: string | null): string => (botUserId === null ? text : text.replaceAll(`<@${botUserId}>`, '')).trim();

/** Where a run answers: the channel (with its credentials) and the Slack thread. */
interface ThreadTarget {
  readonly org: OrgId;
  readonly channel: ChannelDoc;
  readonly credentials: ChannelCredentials;
  readonly chatChannel: string;
  readonly threadTs: string | null;
}

/** the resumer of parked binding runs (runtime/agent/parking.ts) */
const BINDING_SITE = 'binding';

export class BindingRuns {
  /** runs whose approval requests are posted to their thread (a run parked and brought back is watched once) */
  private readonly watched = new Set<string>();

  constructor(
    private readonly deps: BindingRunDependencies,
    credentialsOf: (org: OrgId, channel: ChannelDoc) => ChannelCredentials,
  ) {
    // a run parked on an approval continues with its channel and binding as they are now; its reply goes to the same thread
    deps.launcher.registerResumer(BINDING_SITE, async (org, run, data) => {
      const str = (key: string): string | null => (typeof data[key] === 'string' ? data[key] : null);
      const [channel, binding] = await Promise.all([
        deps.collections.channels.get(org, str('channel_id') ?? ''),
        deps.collections.bindings.get(org, str('binding_id') ?? ''),
      ]);
      const agent = binding ? await deps.collections.agents.get(org, binding.agent_id) : null;
      const site = { org, site: 'slack_thread' as const, agent, sitePrompt: channel?.system_prompt ?? null, siteReadOnly: binding?.read_only ?? true };
      if (!channel?.connection) {
        // the channel was deleted or disconnected meanwhile: the run ends without its Slack tools and posts nothing
        return { ...(await deps.launcher.surroundings(site, [])), onEnd: async () => undefined };
      }
      const target: ThreadTarget = {
        org,
        channel,
        credentials: credentialsOf(org, channel),
        chatChannel: str('chat_channel') ?? '',
        threadTs: str('thread_ts'),
      };
      return {
        ...(await deps.launcher.surroundings(site, channel.source_ids, [channelSource(channel, target.credentials)])),
        onEnd: this.replyOnEnd(target),
        revived: (feed) => this.watchApprovals(target, run.id, feed, feed.lastSeq),
      };
    });
  }

  /** Starts the run (resolves once started); the reply is posted when it ends. */
  async start(request: RunRequest): Promise<string | null> {
    const { org, channel, binding, credentials, message } = request;
    const { collections, launcher } = this.deps;
    const client = clientFor(channel, credentials, this.deps.egress);
    const replyThread = binding.match_rule.preserve_thread ? (message.threadTs ?? message.ts) : null;
    const agent = await collections.agents.get(org, binding.agent_id);
    let prepared: PreparedRun;
    try {
      prepared = await launcher.prepare({
        org,
        site: 'slack_thread',
        agent: agent ?? null,
        sitePrompt: channel.system_prompt,
        siteReadOnly: binding.read_only,
      });
    } catch (error) {
      if (!(error instanceof ServiceError && error.code === 'llm_unconfigured')) throw error;
      await this.post(client, message.chatChannelId, replyThread, 'I cannot answer yet: no language model is configured for this organization.');
      return null;
    }
    const runId = newId('run');
    // from here a cancel reaches the launch (the thread history may take a while)
    launcher.begin(org, runId);
    const history = message.threadTs === null ? [] : await this.threadHistory(client, message, channel);
    const question = withoutMention(message.text, channel.connection?.bot_user_id ?? null);
    const where = message.chatChannelName === null ? message.chatChannelId : `#${message.chatChannelName}`;
    const target: ThreadTarget = { org, channel, credentials, chatChannel: message.chatChannelId, threadTs: replyThread };
    const { feed } = await launcher.start(prepared, {
      runId,
      userId: binding.created_by,
      kind: 'chat',
      question,
      history,
      promptContext: [
        `You are answering in the Slack channel ${where} (id ${message.chatChannelId})${replyThread === null ? '' : `, thread ${replyThread}`}.`,
        binding.read_only ? `This binding is read-only: write tools are refused. ${READ_ONLY_NOTICE}` : '',
      ],
      approvalWrite: binding.approval_write,
      sourceIds: channel.source_ids,
      siteSources: [channelSource(channel, credentials)],
      costCap: { scope: 'chat' },
      record: {
        input: {
          channel_id: channel.id,
          binding_id: binding.id,
          chat_channel: message.chatChannelId,
          chat_user: message.user,
          ts: message.ts,
          thread_ts: replyThread,
          text: question,
        },
        bindingId: binding.id,
      },
      onEnd: this.replyOnEnd(target),
      resume: { site: BINDING_SITE, data: { channel_id: channel.id, binding_id: binding.id, chat_channel: message.chatChannelId, thread_ts: replyThread } },
    });
    this.watchApprovals(target, runId, feed, 0);
    return runId;
  }

  /** The run's end: its text (or a short notice) goes to the thread. */
  private replyOnEnd(target: ThreadTarget): (end: RunEnd, text: string) => Promise<void> {
    return async (end, text) => {
      const reply =
        text.trim() !== ''
          ? text
          : end.status === 'failed'
            ? `Sorry, I could not finish: ${end.message ?? end.reason ?? 'the run failed'}.`
            : end.status === 'cancelled'
              ? 'The answer was cancelled.'
              : '';
      if (reply !== '') await this.reply(target, reply);
    };
  }

  /** Every approval the run asks for after `afterSeq` is posted to the thread with its buttons (the feed drops its listeners when the run ends). */
  private watchApprovals(target: ThreadTarget, runId: string, feed: RunFeed, afterSeq: number): void {
    if (this.watched.has(runId)) return;
    this.watched.add(runId);
    const client = clientFor(target.channel, target.credentials, this.deps.egress);
    feed.subscribe(afterSeq, {
      event: (entry) => {
        if (entry.type !== 'approval_required') return;
        const { approval_id: approvalId, tool, args } = entry.data as { approval_id: string; tool: string; args: unknown };
        const { text, blocks } = approvalBlocks(approvalId, tool, args);
        client.chat
          .postMessage({ channel: target.chatChannel, text, blocks: blocks as never, ...(target.threadTs === null ? {} : { thread_ts: target.threadTs }) })
          .catch((error: unknown) => this.deps.logger.warn({ err: error, run: runId }, 'could not post an approval request to Slack'));
      },
      end: () => this.watched.delete(runId),
    });
  }

  /** Posts a short notice in the thread (rate limit, no model), never throwing. */
  async post(client: WebClient, chatChannel: string, threadTs: string | null, text: string): Promise<void> {
    try {
      await client.chat.postMessage({ channel: chatChannel, text, ...(threadTs === null ? {} : { thread_ts: threadTs }) });
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not post a notice to Slack');
    }
  }

  /** The reply goes out through the slack connector's own post_message tool, with the channel's bot. */
  private async reply(target: ThreadTarget, text: string): Promise<void> {
    const source = channelSource(target.channel, target.credentials);
    try {
      await postMessageTool.run(
        { channel: target.chatChannel, text, ...(target.threadTs === null ? {} : { thread_ts: target.threadTs }) },
        // net: the egress guard, like every other call to the tenant's Slack API base
        { orgId: target.org, sourceId: source.id, config: source.config, signal: AbortSignal.timeout(60_000), net: this.deps.egress },
      );
    } catch (error) {
      const code = ToolError.is(error) ? error.code : 'tool_failed';
      this.deps.logger.warn({ code, channel: target.channel.id, chat_channel: target.chatChannel }, 'could not post the reply to Slack');
    }
  }

  /** The thread's earlier messages: the bot's are the assistant's turns, everyone else's the user's. */
  private async threadHistory(client: WebClient, message: InboundMessage, channel: ChannelDoc): Promise<ChatMessage[]> {
    const botUserId = channel.connection?.bot_user_id ?? null;
    const botId = channel.connection?.bot_id ?? null;
    const out: ChatMessage[] = [];
    let cursor: string | undefined;
    try {
      do {
        const answer = await client.conversations.replies({
          channel: message.chatChannelId,
          ts: message.threadTs ?? message.ts,
          limit: 200,
          ...(cursor ? { cursor } : {}),
        });
        for (const item of answer.messages ?? []) {
          if (item.ts === message.ts || item.text === undefined || item.text === '') continue;
          const own = (botUserId !== null && item.user === botUserId) || (botId !== null && item.bot_id === botId);
          out.push(own ? { role: 'assistant', content: item.text } : { role: 'user', content: withoutMention(item.text, botUserId) });
        }
        cursor = answer.response_metadata?.next_cursor || undefined;
      } while (cursor !== undefined);
    } catch (error) {
      this.deps.logger.warn({ err: error, channel: channel.id }, 'could not read the thread history from Slack');
    }
    return out.slice(-MAX_THREAD_MESSAGES);
  }
}
