/**
 * The agent run machine's types: what starting a run takes, what its side
 * effects answer, what it records, its context and its events.
 */
import type { ToolOutcome } from '../runtime/tools/tool-result.js';
import type { ChatMessage, FinishReason, ToolCall, Usage } from '../runtime/llm/types.js';

export type ApprovalWrite = 'allow' | 'ask';

export interface AgentRunInput {
  readonly runId: string;
  /** system prompt, history and the new user message */
  readonly messages: readonly ChatMessage[];
  /** `allow`: write tools run without asking; anything else asks */
  readonly approvalWrite: ApprovalWrite;
  readonly approvalTimeoutMs: number;
  readonly maxTurns: number;
  readonly timeoutMs: number;
  /** the daily cap in USD (null: none) and what was spent today before this run */
  readonly costCapUsd: number | null;
  readonly spentTodayUsd: number;
  /** a parked run coming back: its context at the approval wait (the run starts in `active.parked`) */
  readonly resumeFrom?: AgentRunContext;
}

/** What a model turn produced (the runtime streamed its text deltas out already). */
export interface TurnOutput {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly costUsd: number;
}

/** A connector tool a step names to execute. */
export interface ExecuteStep {
  readonly kind: 'execute';
  /** `<connector>.<tool>` */
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly effect: 'read' | 'write';
  /** the runtime's resolved tool, handed back to `runTool` */
  readonly resolved: unknown;
}

/**
 * A tool call whose result comes later from outside the run (a media job): the tool hands it over instead of
 * waiting inside the step, and the run waits for `DEFERRED_RESULT` (runtime/agent/deferred-calls.ts).
 */
export interface DeferredWait {
  /** who delivers the result, e.g. `media` */
  readonly kind: string;
  /** what the result waits on, e.g. the media job ids */
  readonly keys: readonly string[];
}

/** What executing a tool answers: its outcome, or the hand-over of its result. */
export type ExecutedTool = ToolOutcome | { readonly deferred: DeferredWait };

/** What a model turn answers: its output, or the hand-over of the turn (a worker performs it, runtime/agent/turn-runner.ts). */
export type TakenTurn = TurnOutput | { readonly deferred: DeferredWait };

/** A tool step either has its result already, or names a connector tool to execute. */
export type ToolStepOutput = { readonly kind: 'result'; readonly outcome: ToolOutcome } | ExecuteStep;

export type RunStatus = 'pending' | 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'cancelled';
export type FinalStatus = 'succeeded' | 'failed' | 'cancelled';

export interface RunEnd {
  readonly status: FinalStatus;
  readonly reason: string | null;
  readonly message: string | null;
  readonly finishReason: string;
  readonly usage: Usage;
  readonly costUsd: number;
  readonly turns: number;
}

/** A transcript entry the machine records; the runtime adds `seq` and the time. */
export type RecordEntry =
  /** a message; an assistant message carries its turn's usage and cost */
  | { readonly type: 'message'; readonly data: ChatMessage; readonly turn?: { readonly usage: Usage; readonly cost_usd: number; readonly turn: number } }
  | { readonly type: 'tool_call_start'; readonly data: { readonly tool_call_id: string; readonly name: string; readonly arguments: Record<string, unknown> } }
  | {
      readonly type: 'approval_required';
      readonly data: { readonly approval_id: string; readonly tool_call_id: string; readonly tool: string; readonly args: Record<string, unknown> };
    }
  | {
      readonly type: 'approval_decision';
      readonly data: { readonly approval_id: string; readonly decision: 'approved' | 'denied' | 'timeout' | 'cancelled'; readonly decided_by: string | null };
    }
  | { readonly type: 'tool_result'; readonly data: { readonly tool_call_id: string; readonly name: string; readonly outcome: ToolOutcome } }
  | { readonly type: 'tool_deferred'; readonly data: { readonly tool_call_id: string; readonly kind: string; readonly keys: readonly string[] } };

/** The tool call being handled. */
export interface CurrentCall {
  readonly call: ToolCall;
  readonly step: ExecuteStep | null;
  readonly outcome: ToolOutcome | null;
  /** set when the call waits for an approval */
  readonly approvalId: string | null;
  /** set when the call's result was handed over (the run waits for it); absent in contexts parked before it existed */
  readonly deferred?: DeferredWait | null;
}

export interface Failure {
  readonly reason: string;
  readonly message: string;
}

export interface AgentRunContext extends AgentRunInput {
  readonly messages: ChatMessage[];
  turns: number;
  /** approvals asked so far */
  approvals: number;
  usage: Usage;
  costUsd: number;
  pending: readonly ToolCall[];
  current: CurrentCall | null;
  /** set while the model turn was handed over (the run waits for it); absent in contexts parked before it existed */
  turnWait?: DeferredWait | null;
  cancelRequested: boolean;
  shutdownRequested: boolean;
  lastFinish: FinishReason | null;
  failure: Failure | null;
}

export type AgentRunEvent =
  | { readonly type: 'START' }
  | { readonly type: 'CANCEL' }
  | { readonly type: 'SHUTDOWN' }
  | { readonly type: 'APPROVE'; readonly approvalId: string; readonly by: string }
  | { readonly type: 'DENY'; readonly approvalId: string; readonly by: string }
  /** the deadlines of a parked run (its own delays were not running while it was parked) */
  | { readonly type: 'APPROVAL_TIMEOUT' }
  | { readonly type: 'RUN_TIMEOUT' }
  /** the result of a call handed over (`key`: one of the wait's keys) */
  | { readonly type: 'DEFERRED_RESULT'; readonly key: string; readonly outcome: ToolOutcome }
  /** the result of a model turn handed over (`key`: one of the wait's keys): its output, or why it could not be taken */
  | ({ readonly type: 'DEFERRED_TURN'; readonly key: string } & ({ readonly output: TurnOutput } | { readonly failure: Failure }));
