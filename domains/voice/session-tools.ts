/**
 * The tool side of one live voice session: the catalog meta-tools the model
 * calls, decided as an agent run's are (runtime/tools/meta-tool-step.ts: the
 * policy gate logs each decision and audits a denial, which goes back to the
 * provider as the call's output), and the approvals a write waits for. The
 * question is asked aloud (a response whose instructions put it) and answered
 * over REST, the socket, or by the user's spoken yes or no (spoken-answer.ts:
 * anything unclear asks again and never approves).
 * Split from live-session.ts so the bridge there does not carry the tool rules.
 */
import { isoAt } from '../../runtime/clock.js';
import { newId } from '../../runtime/ids.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ToolCatalog } from '../../runtime/tools/catalog.js';
import { metaToolStep } from '../../runtime/tools/meta-tool-step.js';
import { EXECUTE_CONNECTOR_TOOL, runExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import type { ToolCallGate } from '../../runtime/tools/tool-gate.js';
import { toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { RealtimeClientEvent } from '../../runtime/voice/realtime.js';
import type { VoiceApprovalVia } from './documents.js';
import type { SessionRecord } from './session-record.js';
import { readSpokenAnswer } from './spoken-answer.js';

export type ApprovalAnswer = 'ok' | 'not_found' | 'decided';

/** the session an approval belongs to, and the user it runs for */
export interface VoiceApprovalSession {
  readonly sessionId: string;
  readonly userId: string;
}

/** what a session reports of its approvals (approval-reports.ts: feed, notifications, audit log); never throws */
export interface VoiceApprovalObserver {
  requested(org: OrgId, session: VoiceApprovalSession, approvalId: string, tool: string): Promise<void>;
  decided(org: OrgId, session: VoiceApprovalSession, approvalId: string, approved: boolean, decidedBy: string | null, via: VoiceApprovalVia): Promise<void>;
}

/** what the tool runner needs from the session it runs in */
export interface ToolHost {
  readonly orgId: OrgId;
  readonly catalog: ToolCatalog;
  /** the organization's policy gate; null when feature `policies` is off */
  readonly policies: ToolCallGate | null;
  readonly observer: VoiceApprovalObserver | null;
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
  readonly tool: string;
  readonly resolve: (approved: boolean, by: string | null, via: VoiceApprovalVia) => void;
}

const DENIED_CODES = new Set(['approval_denied', 'policy_denied']);

export class VoiceToolRunner {
  private readonly abort = new AbortController();
  /** in the order they were asked */
  private readonly approvals = new Map<string, PendingApproval>();

  constructor(private readonly host: ToolHost) {}

  private get session(): VoiceApprovalSession {
    return { sessionId: this.host.record.doc.id, userId: this.host.record.doc.created_by };
  }

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
    const outcome = args === null ? { error: toolErrorBody('invalid_arguments', 'the arguments are not JSON') } : await this.outcomeOf(callId, name, args, at);
    if (host.isEnded()) return;
    const denied = 'error' in outcome && DENIED_CODES.has(outcome.error.code);
    const current = record.callOf(callId, at);
    // a policy denial comes before the tool is recorded: it names the tool asked for
    const tool = current.tool ?? (denied && name === EXECUTE_CONNECTOR_TOOL ? requestedTool(args) : null);
    const status = 'result' in outcome ? 'succeeded' : denied ? 'denied' : 'failed';
    record.upsertCall({
      ...current,
      tool,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: { code: outcome.error.code, message: outcome.error.message } }),
    });
    host.sendClient({
      type: 'tool_call',
      call_id: callId,
      name,
      tool,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: outcome.error }),
    });
    host.sendProvider({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: JSON.stringify(outcome) } });
    host.requestResponse({ type: 'response.create' });
  }

  /** answers a waiting approval (REST, socket or speech) */
  decide(approvalId: string, approved: boolean, by: string | null, via: VoiceApprovalVia): ApprovalAnswer {
    const pending = this.approvals.get(approvalId);
    if (pending === undefined) return this.host.record.hasApproval(approvalId) ? 'decided' : 'not_found';
    this.approvals.delete(approvalId);
    pending.resolve(approved, by, via);
    return 'ok';
  }

  /**
   * The user's final transcript: with one approval waiting, a clear yes or no
   * answers it for the session's user (who holds its client token); anything
   * else asks again. With several waiting, speech cannot tell which one is meant.
   */
  heard(transcript: string): void {
    const [first, ...others] = this.approvals;
    if (first === undefined) return;
    const [approvalId, pending] = first;
    const answer = others.length > 0 ? 'unclear' : readSpokenAnswer(transcript);
    if (answer !== 'unclear') {
      this.decide(approvalId, answer === 'yes', this.session.userId, 'speech');
      return;
    }
    this.host.requestResponse({
      type: 'response.create',
      response: {
        instructions:
          others.length > 0
            ? "Several actions are waiting for the user's approval. Tell the user in one short sentence to approve or deny each of them in the app."
            : `The user's answer was not a clear yes or no. Ask again, in one short sentence, whether you may run the tool ${pending.tool}; they should answer yes or no. Do not run it before they do.`,
      },
    });
  }

  /** the session ended: running tools are aborted, waiting approvals denied (decided by nobody) */
  stop(): void {
    this.abort.abort();
    for (const [, pending] of this.approvals) pending.resolve(false, null, 'session_ended');
    this.approvals.clear();
  }

  /** a meta-tool call decided like an agent run's; a write waits for its approval first */
  private async outcomeOf(callId: string, name: string, args: unknown, at: string): Promise<ToolOutcome> {
    const { host } = this;
    const { record } = host;
    const step = await metaToolStep(host.catalog, name, args, { policies: host.policies, orgId: host.orgId, subject: { user: record.doc.created_by } });
    if (step.kind === 'result') return step.outcome;
    const { resolved } = step;
    record.upsertCall({ ...record.callOf(callId, at), tool: resolved.tool.name });
    if (resolved.effect === 'write' && !(await this.askApproval(callId, resolved.tool.name, resolved.args)))
      return { error: toolErrorBody('approval_denied', 'a person did not allow this write: do not retry it; tell the user') };
    if (host.isEnded()) return { error: toolErrorBody('cancelled', 'the session ended') };
    return runExecuteConnectorTool(host.catalog, resolved, {
      orgId: host.orgId,
      signal: this.abort.signal,
      actorId: record.doc.created_by,
      realm: record.doc.realm,
    });
  }

  private askApproval(callId: string, tool: string, args: Record<string, unknown>): Promise<boolean> {
    const { host } = this;
    const { record } = host;
    const approvalId = newId('vap');
    const asked = record.callOf(callId, isoAt(host.now()));
    record.upsertCall({ ...asked, status: 'pending_approval', approval: { id: approvalId, status: 'pending', decided_by: null } });
    host.sendClient({ type: 'approval_required', approval_id: approvalId, call_id: callId, tool, arguments: args });
    const { observer } = host;
    const session = this.session;
    void observer?.requested(host.orgId, session, approvalId, tool);
    // asked aloud: a response whose only job is the question
    host.requestResponse({
      type: 'response.create',
      response: {
        instructions: `Before running the tool ${tool}, ask the user in one short sentence whether you may do it (${summarize(args)}). They can answer yes or no; wait for their decision.`,
      },
    });
    return new Promise((resolve) => {
      this.approvals.set(approvalId, {
        tool,
        resolve: (approved, by, via) => {
          const call = record.callOf(callId, asked.at);
          record.upsertCall({ ...call, approval: { id: approvalId, status: approved ? 'approved' : 'denied', decided_by: by, via } });
          host.sendClient({ type: 'approval_decided', approval_id: approvalId, call_id: callId, approved, via });
          void observer?.decided(host.orgId, session, approvalId, approved, by, via);
          host.activity();
          resolve(approved);
        },
      });
    });
  }
}

function requestedTool(args: unknown): string | null {
  const tool = args !== null && typeof args === 'object' ? (args as Record<string, unknown>)['tool'] : undefined;
  return typeof tool === 'string' ? tool : null;
}

function summarize(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
