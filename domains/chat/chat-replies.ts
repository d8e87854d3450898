/**
 * Chat's domain side: a message sent to a conversation becomes the user's
 * message, a streaming reply and the agent run that writes it (launched by
 * `startAgentRun`). One reply at a time per conversation; the reply takes the
 * run's text and ending when the run ends.
 */
import type { RunEnd } from '../../actors/agent-run.types.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { RunFeed } from '../../runtime/agent/run-feed.js';
import type { ChatMessageDoc, ConversationDoc } from '../../domains/chat/documents.js';
import type { Collections } from '../collections.js';
import { conflict, ServiceError } from '../../runtime/errors.js';
import { newId, nowIso } from '../../runtime/ids.js';
import type { ChatMessage } from '../../runtime/llm/types.js';
import type { OrgId } from '../../runtime/store/types.js';
import { SupervisorClosedError } from '../../runtime/supervisor.js';

const MAX_HISTORY_MESSAGES = 100;
/** the resumer of parked chat replies */
const CHAT_SITE = 'chat';
const FINAL_MESSAGE_STATUS = { succeeded: 'complete', failed: 'failed', cancelled: 'cancelled' } as const;

export interface SentMessage {
  readonly reply: ChatMessageDoc;
  readonly runId: string;
  readonly feed: RunFeed;
}

export class ChatReplies {
  /** conversations with a reply being written: one reply at a time per conversation */
  private readonly busy = new Set<string>();

  constructor(
    private readonly collections: Collections,
    private readonly launcher: AgentRunLauncher,
  ) {
    // a reply whose run was parked on an approval continues with the conversation's agent as it is now
    launcher.registerResumer(CHAT_SITE, async (org, run, data) => {
      const agentId = typeof data['agent_id'] === 'string' ? data['agent_id'] : null;
      const agent = agentId === null ? null : await collections.agents.get(org, agentId);
      const sourceIds = Array.isArray(data['source_ids']) ? (data['source_ids'] as string[]) : null;
      const surroundings = await launcher.surroundings({ org, site: 'chat', agent }, sourceIds);
      return { ...surroundings, onEnd: this.replyEnded(org, run.conversation_id ?? '', run.message_id ?? '') };
    });
  }

  /** Stores the message and starts the reply's run; 409 while another reply is being written. */
  async send(auth: Pick<AuthContext, 'orgId' | 'userId' | 'sourceIds'>, conversation: ConversationDoc, content: string): Promise<SentMessage> {
    const org = auth.orgId;
    const { agents, chatMessages, conversations } = this.collections;
    const agent = conversation.agent_id === null ? null : await agents.get(org, conversation.agent_id);
    const prepared = await this.launcher.prepare({ org, site: 'chat', agent });
    if (this.busy.has(conversation.id)) {
      throw conflict('a reply is still being written in this conversation; wait for it or cancel it', { conversation_id: conversation.id });
    }
    this.busy.add(conversation.id);
    const runId = newId('run');
    try {
      this.launcher.begin(org, runId);
      const history = await this.history(org, conversation.id);
      await chatMessages.insert(org, {
        conversation_id: conversation.id,
        role: 'user',
        content,
        status: 'complete',
        run_id: null,
        finish_reason: null,
        usage: null,
        error: null,
        created_by: auth.userId,
      });
      const reply = await chatMessages.insert(org, {
        conversation_id: conversation.id,
        role: 'assistant',
        content: '',
        status: 'streaming',
        run_id: runId,
        finish_reason: null,
        usage: null,
        error: null,
        created_by: auth.userId,
      });
      await conversations.update(org, conversation.id, { last_message_at: nowIso() });
      const { feed } = await this.launcher.start(prepared, {
        runId,
        userId: auth.userId,
        kind: 'chat',
        question: content,
        history,
        approvalWrite: conversation.approval_write,
        sourceIds: auth.sourceIds,
        costCap: { scope: 'chat' },
        record: { input: { content }, conversationId: conversation.id, messageId: reply.id },
        onEnd: this.replyEnded(org, conversation.id, reply.id),
        resume: { site: CHAT_SITE, data: { agent_id: conversation.agent_id, source_ids: auth.sourceIds } },
      });
      return { reply, runId, feed };
    } catch (error) {
      this.launcher.abandon(runId);
      this.busy.delete(conversation.id);
      if (error instanceof SupervisorClosedError) throw new ServiceError('service_unavailable', 'the service is shutting down; retry shortly');
      throw error;
    }
  }

  /** The reply takes the run's text and ending; the conversation takes new messages again. */
  private replyEnded(org: OrgId, conversationId: string, replyId: string): (end: RunEnd, text: string) => Promise<void> {
    return async (end, text) => {
      this.busy.delete(conversationId);
      await this.collections.chatMessages.update(org, replyId, {
        content: text,
        status: FINAL_MESSAGE_STATUS[end.status],
        finish_reason: end.finishReason,
        usage: end.usage,
        error: end.status === 'failed' ? { code: end.reason ?? 'internal_error', message: end.message ?? 'the run failed' } : null,
      });
    };
  }

  private async history(org: OrgId, conversationId: string): Promise<ChatMessage[]> {
    const messages = await this.collections.chatMessages.findAll(org, { conversation_id: conversationId });
    return messages
      .filter((message) => message.content !== '')
      .slice(-MAX_HISTORY_MESSAGES)
      .map((message): ChatMessage => ({ role: message.role, content: message.content }));
  }
}
