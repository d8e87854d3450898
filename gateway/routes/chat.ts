/**
 * /chat: conversations with an agent, answered over Server-Sent Events.
 *
 * `POST /chat/conversations/:id/messages` starts an agent run and streams its
 * transcript as the spec's events (`message_start`, `content_delta`,
 * `tool_call_start`, `approval_required`, `tool_result`, `error`,
 * `message_end`); every event's `id:` is its transcript `seq`. The run does
 * not belong to the HTTP response: a client that goes away leaves it running
 * and can pick it up at `GET .../messages/:message_id/events` with
 * `Last-Event-ID`. Conversations are shared by the organization's members
 * who have `chat:use`.
 */
import { z } from 'zod';
import type { ChatMessageDoc, ConversationDoc } from '../../domains/chat/documents.js';
import { ServiceError, conflict } from '../../runtime/errors.js';
import { DEFAULT_AGENT } from '../../domains/organizations.js';
import { assertReferences } from '../../domains/references.js';
import type { OrgId } from '../../runtime/store/types.js';
import { createPageResponder, decimalInteger, listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { liveStream, storedStream } from '../sse.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404 } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { toolCallSchema, toolCallsByMessage } from './chat-tool-calls.js';

const approvalDefaults = z.strictObject({ write: z.enum(['allow', 'ask'], { message: 'approval_defaults.write is "allow" or "ask"' }) });

const conversationCreate = z.strictObject({
  title: safeName(z.string().trim().min(1, { message: 'title must not be empty' }).max(200, { message: 'title is at most 200 characters' })),
  agent: z.string().min(1).max(200).optional(),
  approval_defaults: approvalDefaults.optional(),
});
const messageCreate = z.strictObject({
  content: z.string().min(1, { message: 'content must not be empty' }).max(100_000, { message: 'content is at most 100000 characters' }),
});
const approvalBody = z.strictObject({ approved: z.boolean({ message: 'approved must be true or false' }) });
const messageParams = z.object({ id: z.string().min(1).max(100), message_id: z.string().min(1).max(100) });
const approvalParams = z.object({ id: z.string().min(1).max(100), approval_id: z.string().min(1).max(100) });
const eventsQuery = z.object({ last_event_id: decimalInteger('last_event_id', 0, Number.MAX_SAFE_INTEGER).optional() });
const lastEventId = decimalInteger('Last-Event-ID', 0, Number.MAX_SAFE_INTEGER);

const usageSchema = z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() });
const conversationSchema = z.object({
  ...storedSchema,
  title: z.string(),
  agent_id: z.string().nullable(),
  approval_defaults: z.object({ write: z.enum(['allow', 'ask']) }),
  created_by: z.string(),
  last_message_at: z.string().nullable(),
});
const messageSchema = z.object({
  ...storedSchema,
  conversation_id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  status: z.enum(['complete', 'streaming', 'failed', 'cancelled']),
  run_id: z.string().nullable(),
  finish_reason: z.string().nullable(),
  usage: usageSchema.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_by: z.string(),
});

/** a message with the tool calls of its run (replies; a user's message has none) */
const messageWithToolsSchema = messageSchema.extend({ tool_calls: z.array(toolCallSchema) });

const presentConversation = (conversation: ConversationDoc) => ({
  id: conversation.id,
  title: conversation.title,
  agent_id: conversation.agent_id,
  approval_defaults: { write: conversation.approval_write },
  created_by: conversation.created_by,
  last_message_at: conversation.last_message_at,
  created_at: conversation.created_at,
  updated_at: conversation.updated_at,
});

const presentMessage = (message: ChatMessageDoc) => ({
  id: message.id,
  conversation_id: message.conversation_id,
  role: message.role,
  content: message.content,
  status: message.status,
  run_id: message.run_id,
  finish_reason: message.finish_reason,
  usage: message.usage,
  error: message.error,
  created_by: message.created_by,
  created_at: message.created_at,
  updated_at: message.updated_at,
});

export function chatRoutes({ collections, agentRuntime, launcher, chatReplies }: Services): AnyRoute[] {
  const { conversations, chatMessages, agentRuns, agentRunEvents, agents } = collections;
  const listConversations = createPageResponder(conversations, presentConversation);

  const messageOf = async (org: OrgId, conversationId: string, messageId: string): Promise<ChatMessageDoc> => {
    const message = await chatMessages.get(org, messageId);
    if (!message || message.conversation_id !== conversationId) throw new ServiceError('not_found', `message ${messageId} not found`);
    return message;
  };

  return [
    route({
      method: 'POST',
      path: '/chat/conversations',
      tag: 'chat',
      summary: 'Start a conversation',
      auth: 'bearer',
      permission: 'chat:use',
      body: conversationCreate,
      response: conversationSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        // a named agent must be the organization's; without one, the default agent answers (or none, if it was deleted)
        const agent =
          body.agent === undefined
            ? await agents.findOne(auth.orgId, { name: DEFAULT_AGENT })
            : (await assertReferences(collections, auth.orgId, { agent: { path: 'agent', value: body.agent } })).agent;
        const agentId = agent?.id ?? null;
        const conversation = await conversations.insert(auth.orgId, {
          title: body.title,
          agent_id: agentId,
          approval_write: body.approval_defaults?.write ?? 'ask',
          created_by: auth.userId,
          last_message_at: null,
        });
        return { status: 201, json: presentConversation(conversation) };
      },
    }),
    route({
      method: 'GET',
      path: '/chat/conversations',
      tag: 'chat',
      summary: 'List conversations',
      auth: 'bearer',
      permission: 'chat:use',
      query: pageQuery,
      response: pageSchema(conversationSchema),
      handler: async ({ auth, query }) => listConversations(auth.orgId, query),
    }),
    route({
      method: 'GET',
      path: '/chat/conversations/:id',
      tag: 'chat',
      summary: 'A conversation with its message history',
      auth: 'bearer',
      permission: 'chat:use',
      params: idParams,
      response: conversationSchema.extend({ messages: z.array(messageWithToolsSchema) }),
      handler: async ({ auth, params }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const messages = await chatMessages.findAll(auth.orgId, { conversation_id: conversation.id });
        const calls = await toolCallsByMessage(agentRunEvents, auth.orgId, messages);
        const present = (message: ChatMessageDoc) => ({ ...presentMessage(message), tool_calls: calls.get(message.id) ?? [] });
        return { status: 200, json: { ...presentConversation(conversation), messages: messages.map(present) } };
      },
    }),
    route({
      method: 'GET',
      path: '/chat/conversations/:id/messages',
      tag: 'chat',
      summary: 'Messages of a conversation, oldest first',
      auth: 'bearer',
      permission: 'chat:use',
      params: idParams,
      query: pageQuery,
      response: pageSchema(messageWithToolsSchema),
      handler: async ({ auth, params, query }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        // not the cached page responder: a reply's tool calls change with its transcript, not with the message
        const page = await chatMessages.list(auth.orgId, listOptions(query, { conversation_id: conversation.id }));
        const calls = await toolCallsByMessage(agentRunEvents, auth.orgId, page.items);
        return { status: 200, json: pageEnvelope(query, page, (message) => ({ ...presentMessage(message), tool_calls: calls.get(message.id) ?? [] })) };
      },
    }),
    route({
      method: 'POST',
      path: '/chat/conversations/:id/messages',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      summary: 'Send a message; the reply streams as Server-Sent Events (message_start ... message_end)',
      params: idParams,
      body: messageCreate,
      handler: async ({ auth, params, body }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const { reply, runId, feed } = await chatReplies.send(auth, conversation, body.content);
        return liveStream(feed, 0, { 'x-message-id': reply.id, 'x-run-id': runId });
      },
    }),
    route({
      method: 'GET',
      path: '/chat/conversations/:id/messages/:message_id/events',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      summary: "Reconnect to a reply's event stream: the events after Last-Event-ID (header) or last_event_id (query), then live ones",
      params: messageParams,
      query: eventsQuery,
      handler: async ({ auth, params, query, request }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const message = await messageOf(auth.orgId, conversation.id, params.message_id);
        if (message.run_id === null) throw new ServiceError('not_found', `message ${message.id} has no event stream (only replies do)`);
        const header = request.headers['last-event-id'];
        let after = query.last_event_id ?? 0;
        if (header !== undefined && header.trim() !== '') {
          const parsed = lastEventId.safeParse(header.trim());
          if (!parsed.success) throw new ServiceError('validation_error', 'invalid header: Last-Event-ID must be an event id (an integer)');
          after = parsed.data;
        }
        const feed = agentRuntime.feed(message.run_id);
        if (feed) return liveStream(feed, after);
        return storedStream(await agentRunEvents.findAll(auth.orgId, { run_id: message.run_id }), after);
      },
    }),
    route({
      method: 'POST',
      path: '/chat/conversations/:id/messages/:message_id/cancel',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      summary: 'Cancel a reply being written: its run stops after the current step and ends as cancelled',
      params: messageParams,
      status: 202,
      errors: [409],
      response: z.object({ message_id: z.string(), run_id: z.string(), status: z.literal('cancelling') }),
      handler: async ({ auth, params }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const message = await messageOf(auth.orgId, conversation.id, params.message_id);
        if (message.run_id === null) throw conflict('only a reply being written can be cancelled', { status: message.status });
        if (!launcher.cancel(auth.orgId, message.run_id)) {
          const run = await agentRuns.get(auth.orgId, message.run_id);
          throw conflict('the reply is already finished', { status: run?.status ?? message.status });
        }
        return { status: 202, json: { message_id: message.id, run_id: message.run_id, status: 'cancelling' } };
      },
    }),
    route({
      method: 'POST',
      path: '/chat/conversations/:id/approvals/:approval_id',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      audit: { action: 'decide' },
      summary: 'Answer an approval_required event: approved runs the tool, denied gives the model approval_denied',
      params: approvalParams,
      body: approvalBody,
      response: z.object({ approval_id: z.string(), approved: z.boolean(), decision: z.enum(['approved', 'denied']) }),
      handler: async ({ auth, params, body }) => {
        const org = auth.orgId;
        const conversation = await getOr404(conversations, org, params.id, 'conversation');
        const notFound = new ServiceError('not_found', `approval ${params.approval_id} not found`);
        const liveRunId = agentRuntime.pendingApproval(org, params.approval_id);
        if (liveRunId !== undefined) {
          const run = await agentRuns.get(org, liveRunId);
          if (!run || run.conversation_id !== conversation.id) throw notFound;
          const answer = await agentRuntime.answer(org, params.approval_id, body.approved, auth.userId);
          if (answer === 'accepted') {
            return { status: 200, json: { approval_id: params.approval_id, approved: body.approved, decision: body.approved ? 'approved' : 'denied' } };
          }
        }
        const events = await agentRunEvents.findAll(org, { approval_id: params.approval_id });
        const required = events.find((event) => event.type === 'approval_required');
        if (!required) throw notFound;
        const run = await agentRuns.get(org, required.run_id);
        if (!run || run.conversation_id !== conversation.id) throw notFound;
        const decided = events.find((event) => event.type === 'approval_decision');
        throw conflict('this approval is no longer waiting for an answer', {
          decision: decided ? decided.data['decision'] : null,
          run_status: run.status,
        });
      },
    }),
  ];
}
