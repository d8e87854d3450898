/**
 * Conversations and their messages (`/chat/conversations`): start one with an
 * agent of the organization, read the history with each reply's tool calls,
 * reconnect to a reply's transcript, cancel a reply being written, answer an
 * approval a reply asked for. Sending a message is chat-replies.ts.
 */
import type { Collections } from '../collections.js';
import { DEFAULT_AGENT } from '../organizations.js';
import { assertReferences } from '../references.js';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { ChatMessageDoc, ConversationDoc } from './documents.js';
import { TOOL_EVENT_TYPES, toolCallsByMessage, toolCallsOfRun, type ToolCall, type ToolCallStatus } from './tool-calls.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { AgentRunEventDoc } from '../../runtime/collections.js';
import { ServiceError, conflict } from '../../runtime/errors.js';
import { getOr404 } from '../../runtime/store/documents.js';
import type { ListOptions, OrgId, Page } from '../../runtime/store/types.js';

type ConversationCollections = Pick<
  Collections,
  'conversations' | 'chatMessages' | 'agentRuns' | 'agentRunEvents' | 'agents' | 'realms' | 'channels' | 'sources'
>;

export interface ConversationCreate {
  readonly title: string;
  /** an agent's id or name; left out, the default agent answers (or none, if it was deleted) */
  readonly agent?: string | undefined;
  readonly approval_write?: 'allow' | 'ask' | undefined;
}

/** messages with the tool calls of each reply (by message id; a user's message has none) */
export interface MessagesWithCalls<M> {
  readonly messages: M;
  readonly calls: Map<string, ToolCall[]>;
}

const CALL_ID = /^tc_([0-9a-z]{1,64})_(\d{8})$/;

export class Conversations {
  constructor(
    private readonly collections: ConversationCollections,
    private readonly agentRuntime: Pick<AgentRuntime, 'pendingApproval' | 'answer'>,
    private readonly launcher: Pick<AgentRunLauncher, 'cancel'>,
  ) {}

  /** the conversations as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['conversations'], 'list' | 'revision'> {
    return this.collections.conversations;
  }

  async create(org: OrgId, createdBy: string, input: ConversationCreate): Promise<ConversationDoc> {
    // a named agent must be the organization's
    const agent =
      input.agent === undefined
        ? await this.collections.agents.findOne(org, { name: DEFAULT_AGENT })
        : (await assertReferences(this.collections, org, { agent: { path: 'agent', value: input.agent } })).agent;
    return this.collections.conversations.insert(org, {
      title: input.title,
      agent_id: agent?.id ?? null,
      approval_write: input.approval_write ?? 'ask',
      created_by: createdBy,
      last_message_at: null,
    });
  }

  get(org: OrgId, id: string): Promise<ConversationDoc> {
    return getOr404(this.collections.conversations, org, id, 'conversation');
  }

  /** the whole history, oldest first */
  async history(org: OrgId, id: string): Promise<MessagesWithCalls<ChatMessageDoc[]> & { readonly conversation: ConversationDoc }> {
    const conversation = await this.get(org, id);
    const messages = await this.collections.chatMessages.findAll(org, { conversation_id: conversation.id });
    return { conversation, messages, calls: await toolCallsByMessage(this.collections.agentRunEvents, org, messages) };
  }

  /** one page of messages (a reply's tool calls change with its transcript, not with the message) */
  async messages(org: OrgId, id: string, options: ListOptions): Promise<MessagesWithCalls<Page<ChatMessageDoc>>> {
    const conversation = await this.get(org, id);
    const page = await this.collections.chatMessages.list(org, { ...options, filter: { ...options.filter, conversation_id: conversation.id } });
    return { messages: page, calls: await toolCallsByMessage(this.collections.agentRunEvents, org, page.items) };
  }

  /** a message of the conversation, or 404 (also for one of another conversation) */
  async message(org: OrgId, conversationId: string, messageId: string): Promise<ChatMessageDoc> {
    const conversation = await this.get(org, conversationId);
    const message = await this.collections.chatMessages.get(org, messageId);
    if (!message || message.conversation_id !== conversation.id) throw new ServiceError('not_found', `message ${messageId} not found`);
    return message;
  }

  /** the stored transcript of a run (a reply whose run is no longer live) */
  transcript(org: OrgId, runId: string): Promise<AgentRunEventDoc[]> {
    return this.collections.agentRunEvents.findAll(org, { run_id: runId });
  }

  /** cancels the reply's run; 409 for a user's message or a reply already finished */
  async cancelReply(org: OrgId, conversationId: string, messageId: string): Promise<{ readonly message_id: string; readonly run_id: string }> {
    const message = await this.message(org, conversationId, messageId);
    if (message.run_id === null) throw conflict('only a reply being written can be cancelled', { status: message.status });
    if (!this.launcher.cancel(org, message.run_id)) {
      const run = await this.collections.agentRuns.get(org, message.run_id);
      throw conflict('the reply is already finished', { status: run?.status ?? message.status });
    }
    return { message_id: message.id, run_id: message.run_id };
  }

  /** answers an approval a reply of the conversation is waiting on; 409 when it no longer waits, 404 for another's */
  async answerApproval(org: OrgId, conversationId: string, approvalId: string, approved: boolean, userId: string): Promise<void> {
    const conversation = await this.get(org, conversationId);
    const notFound = new ServiceError('not_found', `approval ${approvalId} not found`);
    const liveRunId = this.agentRuntime.pendingApproval(org, approvalId);
    if (liveRunId !== undefined) {
      const run = await this.collections.agentRuns.get(org, liveRunId);
      if (!run || run.conversation_id !== conversation.id) throw notFound;
      if ((await this.agentRuntime.answer(org, approvalId, approved, userId)) === 'accepted') return;
    }
    const events = await this.collections.agentRunEvents.findAll(org, { approval_id: approvalId });
    const required = events.find((event) => event.type === 'approval_required');
    if (!required) throw notFound;
    const run = await this.collections.agentRuns.get(org, required.run_id);
    if (!run || run.conversation_id !== conversation.id) throw notFound;
    const decided = events.find((event) => event.type === 'approval_decision');
    throw conflict('this approval is no longer waiting for an answer', {
      decision: decided ? decided.data['decision'] : null,
      run_status: run.status,
    });
  }

  /** every tool call of the conversation's replies, sorted by id (run, then order); `status` filters */
  async toolCalls(org: OrgId, conversationId: string, status: ToolCallStatus | undefined): Promise<ToolCall[]> {
    const conversation = await this.get(org, conversationId);
    const replies = (await this.collections.chatMessages.findAll(org, { conversation_id: conversation.id })).filter((message) => message.run_id !== null);
    const byMessage = await toolCallsByMessage(this.collections.agentRunEvents, org, replies);
    const all = [...byMessage.values()].flat().filter((call) => status === undefined || call.status === status);
    return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** one tool call of the conversation by its id (`tc_<run ulid>_<seq>`), or 404 */
  async toolCall(org: OrgId, conversationId: string, callId: string): Promise<ToolCall> {
    const conversation = await this.get(org, conversationId);
    const notFound = new ServiceError('not_found', `tool call ${callId} not found`);
    const match = CALL_ID.exec(callId);
    if (match === null) throw notFound;
    const runId = `run_${match[1] as string}`;
    const reply = await this.collections.chatMessages.findOne(org, { run_id: runId });
    if (!reply || reply.conversation_id !== conversation.id) throw notFound;
    const events = await this.collections.agentRunEvents.findAll(org, { run_id: runId, type: { in: TOOL_EVENT_TYPES } });
    const call = toolCallsOfRun(runId, reply.id, events).find((candidate) => candidate.id === callId);
    if (!call) throw notFound;
    return call;
  }
}
