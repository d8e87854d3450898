/**
 * What the agent runtime tells about its runs as they happen (the activity
 * domain feeds its feed and notifications from it). The runtime depends on
 * this shape only, so the platform never imports a domain.
 */
import type { AgentRunKind } from '../collections.js';
import type { OrgId } from '../store/types.js';

export interface RunFacts {
  readonly runId: string;
  readonly kind: AgentRunKind;
  /** who the run acts for */
  readonly userId: string;
  readonly taskId?: string | null;
  readonly conversationId?: string | null;
  readonly bindingId?: string | null;
}

export interface RunEnding {
  readonly status: string;
  readonly reason: string | null;
  readonly message: string | null;
}

export interface RunObserver {
  runStarted(org: OrgId, run: RunFacts): Promise<void>;
  runEnded(org: OrgId, run: RunFacts, end: RunEnding): Promise<void>;
  approvalRequested(org: OrgId, run: RunFacts, approvalId: string, tool: string): Promise<void>;
  approvalDecided(org: OrgId, run: RunFacts, approvalId: string, decision: string, decidedBy: string | null): Promise<void>;
}
