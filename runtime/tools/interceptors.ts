/**
 * One chain around every tool call (policy, audit, timeout, metrics, or
 * approval if the runtime wants it there): each interceptor sees the call and
 * decides whether and how to call `next`. The catalog runs the chain around
 * the tool itself and maps anything an interceptor throws like a tool throw.
 */
import type { ToolEffect } from '../../connectors/contract.js';
import type { ToolOutcome } from './tool-result.js';

export interface ToolCallInfo {
  /** `<kind>.<tool>` */
  readonly name: string;
  readonly connector: string;
  readonly effect: ToolEffect;
  /** validated arguments, defaults filled */
  readonly args: Readonly<Record<string, unknown>>;
  readonly source: { readonly id: string; readonly name: string } | null;
  readonly orgId: string;
  readonly actorId?: string;
  /** the run's realm, when it has one */
  readonly realm?: string;
  /** the agent run the call belongs to; absent outside runs */
  readonly runId?: string;
  readonly signal: AbortSignal;
}

/** Returns an outcome, usually `next()`'s (possibly changed), or its own without calling `next`. */
export type ToolInterceptor = (call: ToolCallInfo, next: () => Promise<ToolOutcome>) => Promise<ToolOutcome>;

/** Wraps `terminal` in the interceptors; the first one given is the outermost. */
export function composeInterceptors(interceptors: readonly ToolInterceptor[], call: ToolCallInfo, terminal: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const step = (index: number): Promise<ToolOutcome> => {
    const interceptor = interceptors[index];
    return interceptor ? interceptor(call, () => step(index + 1)) : terminal();
  };
  return step(0);
}
