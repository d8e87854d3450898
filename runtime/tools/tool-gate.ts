/**
 * What the agent runtime asks of a gate that decides tool calls before the
 * approval gate (the policies domain implements it). The runtime depends on
 * this shape only, so the platform never imports a domain.
 */
import type { ToolEffect } from '../../connectors/contract.js';
import type { ToolInterceptor } from './interceptors.js';
import type { ToolOutcome } from './tool-result.js';

/** who a run acts for: its task, its channel binding, its user */
export interface PolicySubject {
  readonly task?: string | null;
  readonly binding?: string | null;
  readonly user?: string | null;
}

/** the call a decision is about */
export interface PolicyCall {
  /** `<connector>.<tool>` */
  readonly name: string;
  readonly connector: string;
  readonly effect: ToolEffect;
  readonly args: Readonly<Record<string, unknown>>;
  readonly orgId: string;
  readonly runId?: string;
}

export interface ToolCallGate {
  readonly enabled: boolean;
  /** a denial as the call's outcome, or null when the call may go on to the approval gate */
  precheck(call: PolicyCall, subject: PolicySubject): Promise<ToolOutcome | null>;
  /** the interceptor deciding calls that did not pass `precheck` (e.g. through another path) */
  interceptor(subject: PolicySubject): ToolInterceptor;
  /** whether a tool is denied whatever its arguments, so search does not offer it */
  hides(org: string, tool: Omit<PolicyCall, 'args' | 'orgId'>, subject: PolicySubject): Promise<boolean>;
}
