/**
 * The tool side of one live voice session: the catalog meta-tools the model
 * calls, and the approvals a write waits for. The question is asked aloud (a
 * response whose instructions put it) and answered over REST or the socket.
 * Split from live-session.ts so the bridge there does not carry the tool rules.
 */
import { isoAt } from '../../runtime/clock.js';
import { newId } from '../../runtime/ids.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ToolCatalog } from '../../runtime/tools/catalog.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  resolveExecuteConnectorTool,
  runExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
} from '../../runtime/tools/meta-tools.js';
import { toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { RealtimeClientEvent } from '../../runtime/voice/realtime.js';
import type { SessionRecord } from './session-record.js';

export type ApprovalAnswer = 'ok' | 'not_found' | 'decided';

/** what the tool runner needs from the session it runs in */
export interface ToolHost {
  readonly orgId: OrgId;
  readonly catalog: ToolCatalog;
  readonly record: SessionRecord;
  readonly now: () => number;
  /** true once the session ended: a late result is dropped */
  readonly isEnded: () => boolean;
  readonly sendClient: (event: Record<string, unknown>) => void;
  readonly sendProvider: (event: RealtimeClientEvent) => void;
  /** a response.create, queued behind the one under way */
  readonly requestResponse: (event: RealtimeClientEvent) => void;
  /** a decision counts as activity for the session's idle timer */
  readonly activity: () => void;
}

interface PendingApproval {
  readonly callId: string;
  readonly resolve: (approved: boolean, by: string | null) => void;
}

export class VoiceToolRunner {
  private readonly abort = new AbortController();
  private readonly approvals = new Map<string, PendingApproval>();

  constructor(private readonly host: ToolHost) {}

  /** runs one call from the provider and sends its output back, then asks for the next response */
  async run(callId: string, name: string, argumentsJson: string): Promise<void> {
    const { host } = this;
    const { record } = host;
    let args: unknown;
    try {
      args = JSON.parse(argumentsJson);
    } catch {
      args = null;
    }
    const at = isoAt(host.now());
    record.upsertCall({ call_id: callId, name, arguments: args, tool: null, status: 'running', approval: null, at });
    host.sendClient({ type: 'tool_call', call_id: callId, name, arguments: args, status: 'running' });
    let outcome: ToolOutcome;
    const { catalog } = host;
    const ctx = { orgId: host.orgId, signal: this.abort.signal, actorId: record.doc.created_by, realm: record.doc.realm };
    if (args === null) outcome = { error: toolErrorBody('invalid_arguments', 'the arguments are not JSON') };
    else if (name === SEARCH_CONNECTOR_TOOLS) outcome = applySearchConnectorTools(catalog, args);
    else if (name === EXECUTE_CONNECTOR_TOOL) {
      const resolution = resolveExecuteConnectorTool(catalog, args);
      if (!resolution.ok) outcome = { error: resolution.error };
      else {
        record.upsertCall({ ...record.callOf(callId, at), tool: resolution.tool.name });
        const allowed = resolution.effect === 'write' ? await this.askApproval(callId, resolution.tool.name, resolution.args) : true;
        if (host.isEnded()) return;
        outcome = allowed
          ? await runExecuteConnectorTool(catalog, resolution, ctx)
          : { error: toolErrorBody('approval_denied', 'a person did not allow this write: do not retry it; tell the user') };
      }
    } else outcome = { error: toolErrorBody('unknown_tool', `no tool named "${name}": call ${SEARCH_CONNECTOR_TOOLS} or ${EXECUTE_CONNECTOR_TOOL}`) };
    if (host.isEnded()) return;
    const current = record.callOf(callId, at);
    const denied = 'error' in outcome && outcome.error.code === 'approval_denied';
    const status = 'result' in outcome ? 'succeeded' : denied ? 'denied' : 'failed';
    record.upsertCall({
      ...current,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: { code: outcome.error.code, message: outcome.error.message } }),
    });
    host.sendClient({
      type: 'tool_call',
      call_id: callId,
      name,
      tool: current.tool,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: outcome.error }),
    });
    host.sendProvider({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: JSON.stringify(outcome) } });
    host.requestResponse({ type: 'response.create' });
  }

  /** answers a waiting approval (REST or socket) */
  decide(approvalId: string, approved: boolean, by: string | null): ApprovalAnswer {
    const pending = this.approvals.get(approvalId);
    if (pending === undefined) return this.host.record.hasApproval(approvalId) ? 'decided' : 'not_found';
    this.approvals.delete(approvalId);
    pending.resolve(approved, by);
    return 'ok';
  }

  /** the session ended: running tools are aborted, waiting approvals denied (decided by nobody) */
  stop(): void {
    this.abort.abort();
    for (const [, pending] of this.approvals) pending.resolve(false, null);
    this.approvals.clear();
  }

  private askApproval(callId: string, tool: string, args: Record<string, unknown>): Promise<boolean> {
    const { host } = this;
    const { record } = host;
    const approvalId = newId('vap');
    const at = record.callOf(callId, isoAt(host.now()));
    record.upsertCall({ ...at, status: 'pending_approval', approval: { id: approvalId, status: 'pending', decided_by: null } });
    host.sendClient({ type: 'approval_required', approval_id: approvalId, call_id: callId, tool, arguments: args });
    // asked aloud: a response whose only job is the question
    host.requestResponse({
      type: 'response.create',
      response: {
        instructions: `Before running the tool ${tool}, ask the user in one short sentence whether you may do it (${summarize(args)}). They can answer yes or no; wait for their decision.`,
      },
    });
    return new Promise((resolve) => {
      this.approvals.set(approvalId, {
        callId,
        resolve: (approved, by) => {
          const call = record.callOf(callId, at.at);
          record.upsertCall({ ...call, approval: { id: approvalId, status: approved ? 'approved' : 'denied', decided_by: by } });
          host.activity();
          resolve(approved);
        },
      });
    });
  }
}

function summarize(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
