/**
 * A transcript entry the machine records, on the run's feed (persisted and
 * streamed): messages with their turn's usage, tool calls with the connector
 * they target, approvals (tracked while they wait), tool results.
 */
import type { RecordEntry } from '../../actors/agent-run.types.js';
import { EXECUTE_CONNECTOR_TOOL } from '../tools/meta-tools.js';
import type { LiveRun } from './live-run.js';

/** `approvals`: approval id -> run id, while the approval waits (the runtime's answer lookup) */
export function recordEntry(run: LiveRun, entry: RecordEntry, approvals: Map<string, string>): void {
  const { feed } = run;
  switch (entry.type) {
    case 'message':
      // one entry per model turn: the assistant message with its usage and cost
      feed.append('message', entry.turn === undefined ? { ...entry.data } : { ...entry.data, ...entry.turn });
      return;
    case 'tool_call_start':
      feed.append('tool_call_start', {
        tool_call_id: entry.data.tool_call_id,
        name: entry.data.name,
        connector: connectorOf(entry.data),
        arguments: entry.data.arguments,
      });
      return;
    case 'approval_required':
      approvals.set(entry.data.approval_id, run.id);
      run.approvalIds.add(entry.data.approval_id);
      feed.append('approval_required', { ...entry.data }, entry.data.approval_id);
      return;
    case 'approval_decision':
      approvals.delete(entry.data.approval_id);
      run.approvalIds.delete(entry.data.approval_id);
      feed.append('approval_decision', { ...entry.data }, entry.data.approval_id);
      return;
    case 'tool_result':
      feed.append('tool_result', { tool_call_id: entry.data.tool_call_id, name: entry.data.name, result: entry.data.outcome });
      return;
    case 'tool_deferred':
      // the call's result comes later (a media job): the run waits for it, possibly parked
      feed.append('tool_deferred', { tool_call_id: entry.data.tool_call_id, kind: entry.data.kind, keys: [...entry.data.keys] });
      return;
  }
}

/** The connector an `execute_connector_tool` call targets (`memory` of `memory.store`), else null. */
function connectorOf(call: { name: string; arguments: Record<string, unknown> }): string | null {
  if (call.name !== EXECUTE_CONNECTOR_TOOL) return null;
  const tool = call.arguments['tool'];
  if (typeof tool !== 'string' || !tool.includes('.')) return null;
  return tool.slice(0, tool.indexOf('.'));
}
