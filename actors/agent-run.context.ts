/**
 * Pure functions of the agent run's context: its start, what a turn or a
 * tool call adds to it, the transcript entries it records, and its end.
 * The machine's actions (agent-run.setup.ts) are made of these.
 */
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../runtime/tools/tool-result.js';
import type { ChatMessage, ToolCall, Usage } from '../runtime/llm/types.js';
import type { AgentRunContext, AgentRunInput, CurrentCall, DeferredWait, Failure, FinalStatus, RecordEntry, RunEnd, TurnOutput } from './agent-run.types.js';

const zeroUsage: Usage = { input_tokens: 0, output_tokens: 0 };

export function initialContext(input: AgentRunInput): AgentRunContext {
  if (input.resumeFrom) return { ...input.resumeFrom, messages: [...input.resumeFrom.messages], timeoutMs: input.timeoutMs };
  return {
    ...input,
    messages: [...input.messages],
    turns: 0,
    approvals: 0,
    usage: zeroUsage,
    costUsd: 0,
    pending: [],
    current: null,
    turnWait: null,
    cancelRequested: false,
    shutdownRequested: false,
    lastFinish: null,
    failure: null,
  };
}

/** `apr_<run ulid>_<n>`: derived from the run, so unique without drawing a random id */
export const approvalIdOf = (runId: string, n: number): string => `apr_${runId.slice(runId.indexOf('_') + 1)}_${n}`;

/** An error a step threw, as a failure reason: LlmError and ServiceError carry a `code`. */
export function failureOf(error: unknown): Failure {
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : 'internal_error';
  const message = error instanceof Error ? error.message : String(error);
  return { reason: code, message };
}

/** The assistant message of a turn (appended to the conversation) and the counts it adds. */
export function afterTurn(context: AgentRunContext, out: TurnOutput): Partial<AgentRunContext> {
  const assistant: ChatMessage =
    out.toolCalls.length > 0 ? { role: 'assistant', content: out.text, tool_calls: out.toolCalls } : { role: 'assistant', content: out.text };
  context.messages.push(assistant);
  return {
    turns: context.turns + 1,
    usage: {
      input_tokens: context.usage.input_tokens + out.usage.input_tokens,
      output_tokens: context.usage.output_tokens + out.usage.output_tokens,
    },
    costUsd: context.costUsd + out.costUsd,
    pending: out.toolCalls,
    lastFinish: out.finishReason,
    turnWait: null,
  };
}

/** What the run waits for from outside (a handed-over tool result or model turn), else null. */
export const deferredWaitOf = (context: AgentRunContext): DeferredWait | null => context.current?.deferred ?? context.turnWait ?? null;

/** The run's reply so far: the text of its own turns (the history before them is not its own). */
export function replyText(context: AgentRunContext): string {
  if (context.turns === 0) return '';
  const assistant = context.messages.filter((message) => message.role === 'assistant');
  return assistant
    .slice(-context.turns)
    .map((message) => message.content)
    .join('');
}

/** The transcript entry of the turn just taken (see afterTurn). */
export function turnEntry(context: AgentRunContext, out: TurnOutput): RecordEntry {
  return {
    type: 'message',
    data: context.messages[context.messages.length - 1] as ChatMessage,
    turn: { usage: out.usage, cost_usd: out.costUsd, turn: context.turns },
  };
}

/** The call being handled (set while one is). */
export const currentOf = (context: AgentRunContext): CurrentCall => context.current as CurrentCall;

/** The tool message answering a call, for the model's next turn. */
export const toolMessage = (call: ToolCall, outcome: ToolOutcome): ChatMessage => ({
  role: 'tool',
  tool_call_id: call.id,
  name: call.name,
  content: JSON.stringify(outcome),
});

export function decision(context: AgentRunContext, verdict: 'approved' | 'denied' | 'timeout' | 'cancelled', by: string | null): RecordEntry {
  const approvalId = context.current?.approvalId ?? '';
  return { type: 'approval_decision', data: { approval_id: approvalId, decision: verdict, decided_by: by } };
}

/** The current call, answered with a tool error (its approval denied or not given in time). */
export function denied(context: AgentRunContext, code: string, message: string): CurrentCall {
  return { ...currentOf(context), outcome: failedOutcome(toolErrorBody(code, message)) };
}

export function end(context: AgentRunContext, status: FinalStatus): RunEnd {
  const failure = status === 'failed' ? (context.failure ?? { reason: 'internal_error', message: 'the run failed' }) : null;
  return {
    status,
    reason: status === 'cancelled' ? 'cancelled' : (failure?.reason ?? null),
    message: failure?.message ?? null,
    finishReason: status === 'succeeded' ? (context.lastFinish ?? 'end_turn') : status === 'cancelled' ? 'cancelled' : 'error',
    usage: context.usage,
    costUsd: context.costUsd,
    turns: context.turns,
  };
}
