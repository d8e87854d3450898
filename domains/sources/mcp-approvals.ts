/**
 * Approvals of writes asked for through the /mcp endpoint. An MCP client
 * cannot be held open while a person decides, so a write answers
 * `approval_required` with an approval id at once; a person approves or
 * denies it over REST; the client calls again with the id, and the write
 * runs once, for exactly the approved tool, source and arguments.
 */
import type { ResolvedToolCall } from '../../runtime/tools/catalog.js';
import type { WriteGate } from '../../runtime/tools/mcp-server.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { Collections } from '../collections.js';
import { sha256Hex } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import { DEFAULT_APPROVAL_TIMEOUT_SECS } from '../organizations.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { McpApprovalDoc } from './types.js';

/** JSON with sorted keys: the same arguments always hash the same */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const answer = (outcome: ToolOutcome) => ({ kind: 'answer', outcome }) as const;

export interface McpCaller {
  readonly orgId: OrgId;
  readonly userId: string;
  readonly apiKeyId: string | null;
}

export class McpApprovals {
  constructor(
    private readonly collections: Collections,
    // wall clock: the default of callers without a runtime clock
    private readonly now: () => number = Date.now,
  ) {}

  /** The gate for one caller: every write needs an approval (the org's approval timeout bounds how long it waits). */
  gateFor(caller: McpCaller): WriteGate {
    return {
      check: async (call, approvalId) => {
        const argsHash = sha256Hex(canonical(call.args));
        if (approvalId === undefined) return answer(await this.ask(caller, call, argsHash));
        const approval = await this.collections.mcpApprovals.get(caller.orgId, approvalId);
        const matches = approval && approval.tool === call.tool.name && approval.source_id === (call.source?.id ?? null) && approval.args_hash === argsHash;
        if (!approval || !matches) {
          return answer(
            failedOutcome(
              toolErrorBody(
                'approval_mismatch',
                `approval ${approvalId} is not for this tool, source and arguments; call without approval_id to ask for a new one`,
              ),
            ),
          );
        }
        if (approval.status === 'pending' && Date.parse(approval.expires_at) <= this.now()) {
          return answer(failedOutcome(toolErrorBody('approval_timeout', 'nobody answered the approval in time; ask again')));
        }
        if (approval.status === 'pending') {
          return answer(
            failedOutcome(
              toolErrorBody('approval_pending', `approval ${approval.id} is still waiting for a person; call again once it is approved`, {
                approval_id: approval.id,
              }),
            ),
          );
        }
        if (approval.status === 'denied') return answer(failedOutcome(toolErrorBody('approval_denied', 'a person denied this write: do not retry it')));
        if (approval.status === 'used') return answer(failedOutcome(toolErrorBody('approval_used', 'this approval was already used; ask for a new one')));
        // approved: consumed before the write runs, so a retried call cannot run it twice
        await this.collections.mcpApprovals.update(caller.orgId, approval.id, { status: 'used' });
        return { kind: 'run' } as const;
      },
    };
  }

  async list(org: OrgId, status: McpApprovalDoc['status'] | undefined): Promise<McpApprovalDoc[]> {
    return this.collections.mcpApprovals.findAll(org, status === undefined ? {} : { status });
  }

  /** A person's decision on a pending approval; 404 for another org's id, 409 once decided or expired. */
  async decide(org: OrgId, approvalId: string, approved: boolean, userId: string): Promise<McpApprovalDoc> {
    const approval = await this.collections.mcpApprovals.get(org, approvalId);
    if (!approval) throw new ServiceError('not_found', `approval ${approvalId} not found`);
    if (approval.status !== 'pending') throw new ServiceError('conflict', `approval ${approvalId} is already ${approval.status}`, { status: approval.status });
    if (Date.parse(approval.expires_at) <= this.now()) throw new ServiceError('conflict', `approval ${approvalId} expired`, { status: 'expired' });
    const updated = await this.collections.mcpApprovals.update(org, approval.id, {
      status: approved ? 'approved' : 'denied',
      decided_by: userId,
      decided_at: nowIso(),
    });
    return updated ?? approval;
  }

  private async ask(caller: McpCaller, call: ResolvedToolCall, argsHash: string): Promise<ToolOutcome> {
    const settings = await this.collections.settings.findOne(caller.orgId, { singleton: true });
    const timeoutSecs = settings?.approval_timeout_secs ?? DEFAULT_APPROVAL_TIMEOUT_SECS;
    const approval = await this.collections.mcpApprovals.insert(caller.orgId, {
      tool: call.tool.name,
      source_id: call.source?.id ?? null,
      args: call.args,
      args_hash: argsHash,
      status: 'pending',
      requested_by: caller.userId,
      api_key_id: caller.apiKeyId,
      decided_by: null,
      decided_at: null,
      expires_at: new Date(this.now() + timeoutSecs * 1000).toISOString(),
    });
    return failedOutcome(
      toolErrorBody(
        'approval_required',
        `${call.tool.name} is a write and needs a person's approval. Ask them to approve ${approval.id} (POST /api/v1/mcp/approvals/${approval.id} with {"approved": true}), then call execute_connector_tool again with the same tool and arguments and "approval_id": "${approval.id}".`,
        { approval_id: approval.id, tool: call.tool.name, args: call.args, expires_at: approval.expires_at },
      ),
    );
  }
}
