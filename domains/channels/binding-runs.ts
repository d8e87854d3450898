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
import type { NetPort } from '../../connectors/contract.js';
import type { CatalogSource } from '../../runtime/tools/catalog.js';
import { ToolError } from '../../connectors/contract.js';
import { createSlackClient, postMessageTool } from './slack-client.js';
import { agentRunOptions, recalledMemory } from '../agents/agent-options.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { BindingDoc, ChannelDoc } from './documents.js';
import type { Collections } from '../collections.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { resolveLlmProvider } from '../../runtime/llm/index.js';
import { LlmError, type ChatMessage } from '../../runtime/llm/types.js';
import { SETTINGS_DEFAULTS } from '../organizations.js';
import type { SourceDirectory } from '../sources/directory.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { InboundMessage } from '../../actors/binding.machine.js';
import { approvalBlocks } from './approvals.js';
import type { ChannelCredentials } from './credentials.js';
import { READ_ONLY_NOTICE } from './read-only.js';

/** earlier thread messages given to the model */
const MAX_THREAD_MESSAGES = 50;
const DEFAULT_SYSTEM_PROMPT = [
  "You are the organization's assistant, answering in a Slack thread. You work with its connected systems and its memory through two tools:",
  'search_connector_tools finds the tools available to you (with their input schemas), and execute_connector_tool runs one by name.',
  'Your final answer is posted to the thread for you: do not post it yourself. Answer concisely, in Slack mrkdwn.',
].join(' ');

export interface BindingRunDependencies {
  readonly collections: Collections;
  readonly agentRuntime: AgentRuntime;
  readonly sources: SourceDirectory;
  readonly config: ServiceConfig;
  readonly logger: Logger;
  /** the egress guard: an organization's llm_base_url is reached through it */
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
export function channelSource(channel: ChannelDoc, credentials: ChannelCredentials): CatalogSource {
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
const withoutMention = (text: string, botUserId: string | null): string =>
  (botUserId === null ? text : text.replaceAll(`<@${botUserId}>`, '')).trim();

export class BindingRuns {
  constructor(private readonly deps: BindingRunDependencies) {}

  /** Starts the run (resolves once started); the reply is posted when it ends. */
  async start(request: RunRequest): Promise<string | null> {
    const { org, channel, binding, credentials, message } = request;
    const { collections, config, agentRuntime } = this.deps;
    const client = clientFor(channel, credentials, this.deps.egress);
    const replyThread = binding.match_rule.preserve_thread ? (message.threadTs ?? message.ts) : null;
    const settings = (await collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
    const agent = await collections.agents.get(org, binding.agent_id);
    const options = agentRunOptions({ agent: agent ?? null, basePrompt: DEFAULT_SYSTEM_PROMPT, sitePrompt: channel.system_prompt, siteReadOnly: binding.read_only });
    let llm: ReturnType<typeof resolveLlmProvider>;
    try {
      llm = resolveLlmProvider(org, { ...settings, llm_model: options.model ?? settings.llm_model }, config, { fetch: this.deps.egress.fetch });
    } catch (error) {
      if (!(error instanceof LlmError)) throw error;
      await this.post(client, message.chatChannelId, replyThread, 'I cannot answer yet: no language model is configured for this organization.');
      return null;
    }
    const botUserId = channel.connection?.bot_user_id ?? null;
    const history = message.threadTs === null ? [] : await this.threadHistory(client, message, channel);
    const question = withoutMention(message.text, botUserId);
    const systemPrompt = [
      options.systemPrompt,
      `You are answering in the Slack channel ${message.chatChannelName === null ? message.chatChannelId : `#${message.chatChannelName}`} (id ${message.chatChannelId})${replyThread === null ? '' : `, thread ${replyThread}`}.`,
      binding.read_only ? `This binding is read-only: write tools are refused. ${READ_ONLY_NOTICE}` : '',
      (await recalledMemory(collections.memory, org, question, options.recall)) ?? '',
    ].filter((part) => part !== '').join('\n\n');
    const sources = [
      ...(channel.source_ids.length === 0 ? [] : await this.deps.sources.catalogSources(org, channel.source_ids)),
      channelSource(channel, credentials),
    ];
    const { runId, feed } = await agentRuntime.startRun({
      orgId: org,
      userId: binding.created_by,
      kind: 'chat',
      input: {
        channel_id: channel.id,
        binding_id: binding.id,
        chat_channel: message.chatChannelId,
        chat_user: message.user,
        ts: message.ts,
        thread_ts: replyThread,
        text: question,
      },
      messages: [{ role: 'system', content: systemPrompt }, ...history, { role: 'user', content: question }],
      provider: llm.provider,
      model: llm.model,
      temperature: options.temperature,
      // read-only: writes are refused by the interceptor, so nobody is asked to approve one
      approvalWrite: options.readOnly ? 'allow' : binding.approval_write,
      approvalTimeoutMs: settings.approval_timeout_secs * 1000,
      maxTurns: options.maxTurns,
      timeoutMs: config.agentRunTimeoutSecs * 1000,
      sources,
      interceptors: options.interceptors,
      bindingId: binding.id,
      costCapUsd: config.chatCostCapUsdPerDay,
      spentTodayUsd: config.chatCostCapUsdPerDay === null ? 0 : await this.spentToday(org),
      onEnd: async (end, text) => {
        const reply =
          text.trim() !== ''
            ? text
            : end.status === 'failed'
              ? `Sorry, I could not finish: ${end.message ?? end.reason ?? 'the run failed'}.`
              : end.status === 'cancelled'
                ? 'The answer was cancelled.'
                : '';
        if (reply !== '') await this.reply(request, replyThread, reply);
      },
    });
    // the feed drops its listeners when the run ends
    feed.subscribe(0, {
      event: (entry) => {
        if (entry.type !== 'approval_required') return;
        const { approval_id: approvalId, tool, args } = entry.data as { approval_id: string; tool: string; args: unknown };
        const { text, blocks } = approvalBlocks(approvalId, tool, args);
        client.chat
          .postMessage({ channel: message.chatChannelId, text, blocks: blocks as never, ...(replyThread === null ? {} : { thread_ts: replyThread }) })
          .catch((error: unknown) => this.deps.logger.warn({ err: error, run: runId }, 'could not post an approval request to Slack'));
      },
      end: () => undefined,
    });
    return runId;
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
  private async reply(request: RunRequest, threadTs: string | null, text: string): Promise<void> {
    const source = channelSource(request.channel, request.credentials);
    try {
      await postMessageTool.run(
        { channel: request.message.chatChannelId, text, ...(threadTs === null ? {} : { thread_ts: threadTs }) },
        { orgId: request.org, sourceId: source.id, config: source.config, signal: AbortSignal.timeout(60_000) },
      );
    } catch (error) {
      const code = ToolError.is(error) ? error.code : 'tool_failed';
      this.deps.logger.warn({ code, channel: request.channel.id, chat_channel: request.message.chatChannelId }, 'could not post the reply to Slack');
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
        const answer = await client.conversations.replies({ channel: message.chatChannelId, ts: message.threadTs ?? message.ts, limit: 200, ...(cursor ? { cursor } : {}) });
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

  private async spentToday(org: OrgId): Promise<number> {
    const today = new Date().toISOString().slice(0, 10);
    const runs = await this.deps.collections.agentRuns.findAll(org, { day: today, kind: 'chat' });
    return runs.reduce((sum, run) => sum + run.cost_usd, 0);
  }
}
