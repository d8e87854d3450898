/**
 * The tool calls of a conversation's replies, as a resource. Nothing new is
 * stored: each call is read back from its run's transcript (`agent_run_events`:
 * tool_call_start, approval_required, approval_decision, tool_result, and
 * message_end for a run that ended before the call did). A call's id is
 * `tc_<run ulid>_<seq of its tool_call_start>`, derived like the transcript's
 * own event ids, so ids sort by run then order; the model's own id is
 * `tool_call_id` (providers make those unique, scripted models may not).
 */
import { z } from 'zod';
import type { AgentRunEventDoc } from '../../runtime/collections.js';
import type { ChatMessageDoc } from '../../domains/chat/documents.js';
import { EXECUTE_CONNECTOR_TOOL } from '../../runtime/tools/meta-tools.js';
import { toolErrorBody } from '../../runtime/tools/tool-result.js';
import { ServiceError } from '../../runtime/errors.js';
import type { OrgId } from '../../runtime/store/types.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { getOr404 } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const TOOL_CALL_STATUSES = ['running', 'pending_approval', 'approved', 'denied', 'succeeded', 'failed'] as const;
type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** the transcript entries a tool call is made of */
const TOOL_EVENT_TYPES = ['tool_call_start', 'approval_required', 'approval_decision', 'tool_result', 'error', 'message_end'];

const toolErrorSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

export const toolCallSchema = z.object({
  id: z.string(),
  /** the id the model gave the call */
  tool_call_id: z.string(),
  run_id: z.string(),
  /** the assistant message (reply) whose run made the call */
  message_id: z.string(),
  /** what the model called: `search_connector_tools` or `execute_connector_tool` */
  name: z.string(),
  /** the tool that ran: `<connector>.<tool>` through execute_connector_tool, else the meta-tool itself */
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  /**
   * running (started, no answer yet), pending_approval, approved (running after its approval),
   * denied (denied, or nobody answered in time), succeeded, failed (the tool's error, or the run
   * ended first)
   */
  status: z.enum(TOOL_CALL_STATUSES),
  /** what the tool answered (null until it succeeded) */
  result: z.unknown(),
  error: toolErrorSchema.nullable(),
  approval_id: z.string().nullable(),
  /** approved, denied, timeout or cancelled, when the call needed an approval that was answered */
  approval_decision: z.string().nullable(),
  decided_by: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});
type ToolCallView = z.output<typeof toolCallSchema>;

const callId = (runId: string, seq: number): string => `tc_${runId.slice(runId.indexOf('_') + 1)}_${String(seq).padStart(8, '0')}`;

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toolError(value: unknown): ToolCallView['error'] {
  const body = record(value);
  const code = text(body['code']);
  if (code === null) return null;
  const details = body['details'];
  return toolErrorBody(code, text(body['message']) ?? '', details === undefined ? undefined : record(details));
}

/** The tool calls of one run, in the order it made them, from its transcript (any order in, sorted by seq). */
function toolCallsOfRun(runId: string, messageId: string, events: readonly AgentRunEventDoc[]): ToolCallView[] {
  const calls: ToolCallView[] = [];
  const open = new Map<string, ToolCallView>();
  const byApproval = new Map<string, ToolCallView>();
  const replace = (call: ToolCallView, next: ToolCallView): ToolCallView => {
    calls[calls.indexOf(call)] = next;
    if (open.get(call.tool_call_id) === call) open.set(call.tool_call_id, next);
    if (call.approval_id !== null && byApproval.get(call.approval_id) === call) byApproval.set(call.approval_id, next);
    return next;
  };
  for (const event of [...events].sort((a, b) => a.seq - b.seq)) {
    const data = event.data;
    const toolCallId = text(data['tool_call_id']);
    switch (event.type) {
      case 'tool_call_start': {
        if (toolCallId === null) break;
        const name = text(data['name']) ?? '';
        const args = record(data['arguments']);
        const executed = name === EXECUTE_CONNECTOR_TOOL ? text(args['tool']) : null;
        const call: ToolCallView = {
          id: callId(runId, event.seq),
          tool_call_id: toolCallId,
          run_id: runId,
          message_id: messageId,
          name,
          tool: executed ?? name,
          arguments: executed === null ? args : record(args['arguments']),
          status: 'running',
          result: null,
          error: null,
          approval_id: null,
          approval_decision: null,
          decided_by: null,
          started_at: event.at,
          finished_at: null,
        };
        calls.push(call);
        open.set(toolCallId, call);
        break;
      }
      case 'approval_required': {
        const call = toolCallId === null ? undefined : open.get(toolCallId);
        const approvalId = text(data['approval_id']);
        if (!call || approvalId === null) break;
        const next = replace(call, {
          ...call,
          status: 'pending_approval',
          approval_id: approvalId,
          // what will run once approved: the tool and arguments as resolved
          tool: text(data['tool']) ?? call.tool,
          arguments: data['args'] === undefined ? call.arguments : record(data['args']),
        });
        byApproval.set(approvalId, next);
        break;
      }
      case 'approval_decision': {
        const call = byApproval.get(text(data['approval_id']) ?? '');
        if (!call) break;
        const decision = text(data['decision']);
        replace(call, {
          ...call,
          approval_decision: decision,
          decided_by: text(data['decided_by']),
          status: decision === 'approved' ? 'approved' : 'denied',
        });
        break;
      }
      case 'tool_result': {
        const call = toolCallId === null ? undefined : open.get(toolCallId);
        if (!call) break;
        const outcome = record(data['result']);
        const failed = 'error' in outcome;
        const status: ToolCallStatus = call.status === 'denied' ? 'denied' : failed ? 'failed' : 'succeeded';
        replace(call, {
          ...call,
          status,
          finished_at: event.at,
          ...(failed ? { error: toolError(outcome['error']) } : { result: outcome['result'] ?? null }),
        });
        open.delete(call.tool_call_id);
        break;
      }
      case 'message_end': {
        // the run ended (cancelled, failed, shut down) before these calls answered
        const ended = text(data['status']);
        for (const call of [...open.values()]) {
          replace(call, {
            // a call that never got its approval never ran: denied; one that was running failed
            ...call,
            status: call.status === 'pending_approval' || call.status === 'denied' ? 'denied' : 'failed',
            finished_at: event.at,
            error: toolErrorBody(ended === 'cancelled' ? 'cancelled' : 'interrupted', `the run ended (${ended ?? 'unknown'}) before the tool call finished`),
          });
        }
        open.clear();
        break;
      }
    }
  }
  return calls;
}

/** Tool calls by the id of the reply whose run made them: one transcript query for all the messages. */
export async function toolCallsByMessage(
  events: Services['collections']['agentRunEvents'],
  org: OrgId,
  messages: readonly ChatMessageDoc[],
): Promise<Map<string, ToolCallView[]>> {
  const replies = messages.filter((message) => message.run_id !== null);
  const found = new Map<string, ToolCallView[]>();
  if (replies.length === 0) return found;
  const stored = await events.findAll(org, { run_id: { in: replies.map((message) => message.run_id as string) }, type: { in: TOOL_EVENT_TYPES } });
  const byRun = new Map<string, AgentRunEventDoc[]>();
  for (const event of stored) {
    const list = byRun.get(event.run_id);
    if (list) list.push(event);
    else byRun.set(event.run_id, [event]);
  }
  for (const message of replies) found.set(message.id, toolCallsOfRun(message.run_id as string, message.id, byRun.get(message.run_id as string) ?? []));
  return found;
}

const listQuery = pageQuery.extend({ status: z.enum(TOOL_CALL_STATUSES).optional() });
const callParams = z.object({ id: z.string().min(1).max(100), call_id: z.string().min(1).max(100) });
const CALL_ID = /^tc_([0-9a-z]{1,64})_(\d{8})$/;

export function chatToolCallRoutes({ collections }: Services): AnyRoute[] {
  const { conversations, chatMessages, agentRunEvents } = collections;
  const replies = async (org: OrgId, conversationId: string): Promise<ChatMessageDoc[]> =>
    (await chatMessages.findAll(org, { conversation_id: conversationId })).filter((message) => message.run_id !== null);

  return [
    route({
      method: 'GET',
      path: '/chat/conversations/:id/tool-calls',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      summary: "The tool calls of the conversation's replies, oldest first, with approvals and results; `status` filters",
      params: idParams,
      query: listQuery,
      response: pageSchema(toolCallSchema),
      handler: async ({ auth, params, query }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const byMessage = await toolCallsByMessage(agentRunEvents, auth.orgId, await replies(auth.orgId, conversation.id));
        const all = [...byMessage.values()].flat().filter((call) => query.status === undefined || call.status === query.status);
        all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
        const rest = after === null ? all : all.filter((call) => call.id > after);
        const page = rest.slice(0, query.limit);
        const last = page.at(-1);
        return {
          status: 200,
          json: { items: page, next_cursor: last !== undefined && rest.length > page.length ? encodeCursor(query, last.id) : null, total: all.length },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/chat/conversations/:id/tool-calls/:call_id',
      tag: 'chat',
      auth: 'bearer',
      permission: 'chat:use',
      summary: 'One tool call of the conversation: arguments, approval, result or error',
      params: callParams,
      response: toolCallSchema,
      handler: async ({ auth, params }) => {
        const conversation = await getOr404(conversations, auth.orgId, params.id, 'conversation');
        const notFound = new ServiceError('not_found', `tool call ${params.call_id} not found`);
        const match = CALL_ID.exec(params.call_id);
        if (match === null) throw notFound;
        const runId = `run_${match[1] as string}`;
        const reply = await chatMessages.findOne(auth.orgId, { run_id: runId });
        if (!reply || reply.conversation_id !== conversation.id) throw notFound;
        const events = await agentRunEvents.findAll(auth.orgId, { run_id: runId, type: { in: TOOL_EVENT_TYPES } });
        const call = toolCallsOfRun(runId, reply.id, events).find((candidate) => candidate.id === params.call_id);
        if (!call) throw notFound;
        return { status: 200, json: call };
      },
    }),
  ];
}
