/**
 * The tool calls of a conversation's replies, as a resource, read back from
 * each run's transcript by the chat domain (domains/chat/tool-calls.ts says how).
 */
import { z } from 'zod';
import { TOOL_CALL_STATUSES } from '../../domains/chat/tool-calls.js';
import { decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

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
const listQuery = pageQuery.extend({ status: z.enum(TOOL_CALL_STATUSES).optional() });
const callParams = z.object({ id: z.string().min(1).max(100), call_id: z.string().min(1).max(100) });

export function chatToolCallRoutes({ conversations }: Services): AnyRoute[] {
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
        const all = await conversations.toolCalls(auth.orgId, params.id, query.status);
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
      handler: async ({ auth, params }) => ({ status: 200, json: await conversations.toolCall(auth.orgId, params.id, params.call_id) }),
    }),
  ];
}
