/**
 * The agent run: `pending` -> `running` (<-> `awaiting_approval`) ->
 * `succeeded` | `failed` | `cancelled`.
 *
 * One loop: ask the model (with the two catalog meta-tools), then handle each
 * tool call it made, then ask again, until it answers without tool calls.
 * Every side effect is named here and supplied by the runtime
 * (runtime/agent/agent-runtime.ts) through `.provide()`: the model turn, the
 * tool steps, the transcript, the persistence of the status. Failure is a
 * state with a reason, never an exception.
 *
 * Cancellation and shutdown are flags set by events; the loop checks them
 * between turns and after every tool call (an approval wait ends at once).
 * Ending reasons of `failed`: `max_turns`, `timeout`, `cost_cap_exceeded`,
 * `shutdown`, the LLM error codes (`llm_unconfigured`, `llm_provider_error`,
 * `llm_rate_limited`, `llm_unreachable`, ...), `internal_error`.
 */
import { assign, fromPromise, setup, type SnapshotFrom } from 'xstate';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../runtime/tools/tool-result.js';
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
}

/** What a model turn produced (the runtime streamed its text deltas out already). */
export interface TurnOutput {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly costUsd: number;
}

/** A tool step either has its result already, or names a connector tool to execute. */
export type ToolStepOutput =
  | { readonly kind: 'result'; readonly outcome: ToolOutcome }
  | {
      readonly kind: 'execute';
      /** `<connector>.<tool>` */
      readonly tool: string;
      readonly args: Record<string, unknown>;
      readonly effect: 'read' | 'write';
      /** the runtime's resolved tool, handed back to `runTool` */
      readonly resolved: unknown;
    };

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
  | { readonly type: 'approval_required'; readonly data: { readonly approval_id: string; readonly tool_call_id: string; readonly tool: string; readonly args: Record<string, unknown> } }
  | {
      readonly type: 'approval_decision';
      readonly data: { readonly approval_id: string; readonly decision: 'approved' | 'denied' | 'timeout' | 'cancelled'; readonly decided_by: string | null };
    }
  | { readonly type: 'tool_result'; readonly data: { readonly tool_call_id: string; readonly name: string; readonly outcome: ToolOutcome } };

interface Current {
  readonly call: ToolCall;
  readonly step: Extract<ToolStepOutput, { kind: 'execute' }> | null;
  readonly outcome: ToolOutcome | null;
  /** set when the call waits for an approval */
  readonly approvalId: string | null;
}

/** `apr_<run ulid>_<n>`: derived from the run, so unique without drawing a random id */
const approvalIdOf = (runId: string, n: number): string => `apr_${runId.slice(runId.indexOf('_') + 1)}_${n}`;

export interface AgentRunContext extends AgentRunInput {
  readonly messages: ChatMessage[];
  turns: number;
  /** approvals asked so far */
  approvals: number;
  usage: Usage;
  costUsd: number;
  pending: readonly ToolCall[];
  current: Current | null;
  cancelRequested: boolean;
  shutdownRequested: boolean;
  lastFinish: FinishReason | null;
  failure: { readonly reason: string; readonly message: string } | null;
}

export type AgentRunEvent =
  | { readonly type: 'START' }
  | { readonly type: 'CANCEL' }
  | { readonly type: 'SHUTDOWN' }
  | { readonly type: 'APPROVE'; readonly approvalId: string; readonly by: string }
  | { readonly type: 'DENY'; readonly approvalId: string; readonly by: string };

const notProvided = (name: string) => () => {
  throw new Error(`agent run: side effect "${name}" was not provided by the runtime`);
};

/** An error a step threw, as a failure reason: LlmError and ServiceError carry a `code`. */
function failureOf(error: unknown): { reason: string; message: string } {
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : 'internal_error';
  const message = error instanceof Error ? error.message : String(error);
  return { reason: code, message };
}

const toolMessage = (call: ToolCall, outcome: ToolOutcome): ChatMessage => ({
  role: 'tool',
  tool_call_id: call.id,
  name: call.name,
  content: JSON.stringify(outcome),
});

const zeroUsage: Usage = { input_tokens: 0, output_tokens: 0 };

export const agentRunMachine = setup({
  types: {
    context: {} as AgentRunContext,
    events: {} as AgentRunEvent,
    input: {} as AgentRunInput,
    output: {} as RunEnd,
  },
  actors: {
    llmTurn: fromPromise<TurnOutput, { runId: string; messages: readonly ChatMessage[] }>(notProvided('llmTurn')),
    toolStep: fromPromise<ToolStepOutput, { runId: string; call: ToolCall }>(notProvided('toolStep')),
    runTool: fromPromise<ToolOutcome, { runId: string; call: ToolCall; resolved: unknown }>(notProvided('runTool')),
  },
  actions: {
    costCapExceeded: assign({
      failure: ({ context }) => ({
        reason: 'cost_cap_exceeded',
        message: `today's spend ${(context.spentTodayUsd + context.costUsd).toFixed(6)} USD is over the cap of ${context.costCapUsd} USD`,
      }),
    }),
    /** a tool step that threw becomes a result the model can read, never a crashed run */
    toolStepFailed: assign({
      current: ({ context, event }) => ({
        ...(context.current as Current),
        outcome: failedOutcome(toolErrorBody('tool_failed', failureOf((event as { error?: unknown }).error).message)),
      }),
    }),
    /** appends to the run's transcript (persisted and streamed) */
    record: (_args, _entry: RecordEntry) => notProvided('record')(),
    /** persists a non-final status */
    setStatus: (_args, _status: { status: 'running' | 'awaiting_approval' }) => notProvided('setStatus')(),
    /** persists the end of the run and closes its stream */
    finalize: (_args, _end: RunEnd) => notProvided('finalize')(),
  },
  delays: {
    approvalTimeout: ({ context }) => context.approvalTimeoutMs,
    runTimeout: ({ context }) => context.timeoutMs,
  },
  guards: {
    cancelRequested: ({ context }) => context.cancelRequested,
    shutdownRequested: ({ context }) => context.shutdownRequested,
    overCostCap: ({ context }) => context.costCapUsd !== null && context.spentTodayUsd + context.costUsd > context.costCapUsd,
    noToolCalls: ({ context }) => context.pending.length === 0,
    outOfTurns: ({ context }) => context.turns >= context.maxTurns,
  },
}).createMachine({
  id: 'agentRun',
  initial: 'pending',
  context: ({ input }) => ({
    ...input,
    messages: [...input.messages],
    turns: 0,
    approvals: 0,
    usage: zeroUsage,
    costUsd: 0,
    pending: [],
    current: null,
    cancelRequested: false,
    shutdownRequested: false,
    lastFinish: null,
    failure: null,
  }),
  on: {
    CANCEL: { actions: assign({ cancelRequested: true }) },
    SHUTDOWN: { actions: assign({ shutdownRequested: true }) },
  },
  states: {
    pending: {
      on: {
        START: 'active',
        CANCEL: { target: 'cancelled', actions: assign({ cancelRequested: true }) },
        SHUTDOWN: { target: 'failed', actions: assign({ failure: { reason: 'shutdown', message: 'the service shut down before the run started' } }) },
      },
    },
    active: {
      initial: 'running',
      after: {
        runTimeout: {
          target: 'failed',
          actions: assign({ failure: ({ context }) => ({ reason: 'timeout', message: `the run took longer than ${context.timeoutMs} ms` }) }),
        },
      },
      states: {
        running: {
          initial: 'budget',
          entry: { type: 'setStatus', params: { status: 'running' } },
          states: {
            /** today's spend may already be over the cap before the first turn */
            budget: {
              always: [
                {
                  guard: 'overCostCap',
                  target: '#agentRun.failed',
                  actions: 'costCapExceeded',
                },
                { target: 'turn' },
              ],
            },
            turn: {
              invoke: {
                src: 'llmTurn',
                input: ({ context }) => ({ runId: context.runId, messages: context.messages }),
                onDone: {
                  target: 'afterTurn',
                  actions: [
                    assign(({ context, event }) => {
                      const out = event.output;
                      const assistant: ChatMessage =
                        out.toolCalls.length > 0
                          ? { role: 'assistant', content: out.text, tool_calls: out.toolCalls }
                          : { role: 'assistant', content: out.text };
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
                      };
                    }),
                    {
                      type: 'record',
                      params: ({ context, event }) => ({
                        type: 'message',
                        data: context.messages[context.messages.length - 1] as ChatMessage,
                        turn: { usage: event.output.usage, cost_usd: event.output.costUsd, turn: context.turns },
                      }),
                    },
                  ],
                },
                onError: { target: '#agentRun.failed', actions: assign({ failure: ({ event }) => failureOf(event.error) }) },
              },
            },
            afterTurn: {
              always: [
                { guard: 'cancelRequested', target: '#agentRun.cancelled' },
                {
                  guard: 'shutdownRequested',
                  target: '#agentRun.failed',
                  actions: assign({ failure: { reason: 'shutdown', message: 'the service shut down during the run' } }),
                },
                {
                  guard: 'overCostCap',
                  target: '#agentRun.failed',
                  actions: 'costCapExceeded',
                },
                { guard: 'noToolCalls', target: '#agentRun.succeeded' },
                {
                  guard: 'outOfTurns',
                  target: '#agentRun.failed',
                  actions: assign({
                    failure: ({ context }) => ({ reason: 'max_turns', message: `the model still calls tools after ${context.maxTurns} turns` }),
                  }),
                },
                { target: 'nextTool' },
              ],
            },
            nextTool: {
              always: [
                { guard: 'noToolCalls', target: 'budget' },
                {
                  target: 'toolStep',
                  actions: assign(({ context }) => ({
                    current: { call: context.pending[0] as ToolCall, step: null, outcome: null, approvalId: null },
                    pending: context.pending.slice(1),
                  })),
                },
              ],
            },
            toolStep: {
              entry: {
                type: 'record',
                params: ({ context }) => {
                  const call = (context.current as Current).call;
                  return { type: 'tool_call_start', data: { tool_call_id: call.id, name: call.name, arguments: call.arguments } };
                },
              },
              invoke: {
                src: 'toolStep',
                input: ({ context }) => ({ runId: context.runId, call: (context.current as Current).call }),
                onDone: [
                  {
                    guard: ({ event }) => event.output.kind === 'result',
                    target: 'afterTool',
                    actions: assign({
                      current: ({ context, event }) => ({
                        ...(context.current as Current),
                        outcome: (event.output as Extract<ToolStepOutput, { kind: 'result' }>).outcome,
                      }),
                    }),
                  },
                  {
                    guard: ({ context, event }) =>
                      event.output.kind === 'execute' && (event.output.effect === 'read' || context.approvalWrite === 'allow'),
                    target: 'executing',
                    actions: assign({
                      current: ({ context, event }) => ({
                        ...(context.current as Current),
                        step: event.output as Extract<ToolStepOutput, { kind: 'execute' }>,
                      }),
                    }),
                  },
                  {
                    target: '#agentRun.active.awaiting_approval',
                    actions: assign(({ context, event }) => ({
                      approvals: context.approvals + 1,
                      current: {
                        ...(context.current as Current),
                        step: event.output as Extract<ToolStepOutput, { kind: 'execute' }>,
                        approvalId: approvalIdOf(context.runId, context.approvals + 1),
                      },
                    })),
                  },
                ],
                onError: { target: 'afterTool', actions: 'toolStepFailed' },
              },
            },
            executing: {
              invoke: {
                src: 'runTool',
                input: ({ context }) => {
                  const current = context.current as Current;
                  return { runId: context.runId, call: current.call, resolved: current.step?.resolved };
                },
                onDone: {
                  target: 'afterTool',
                  actions: assign({ current: ({ context, event }) => ({ ...(context.current as Current), outcome: event.output }) }),
                },
                onError: { target: 'afterTool', actions: 'toolStepFailed' },
              },
            },
            afterTool: {
              entry: [
                {
                  type: 'record',
                  params: ({ context }) => {
                    const current = context.current as Current;
                    return {
                      type: 'tool_result',
                      data: { tool_call_id: current.call.id, name: current.call.name, outcome: current.outcome as ToolOutcome },
                    };
                  },
                },
                assign(({ context }) => {
                  const current = context.current as Current;
                  context.messages.push(toolMessage(current.call, current.outcome as ToolOutcome));
                  return { current: null };
                }),
              ],
              always: [
                { guard: 'cancelRequested', target: '#agentRun.cancelled' },
                {
                  guard: 'shutdownRequested',
                  target: '#agentRun.failed',
                  actions: assign({ failure: { reason: 'shutdown', message: 'the service shut down during the run' } }),
                },
                { target: 'nextTool' },
              ],
            },
          },
        },
        awaiting_approval: {
          entry: [
            { type: 'setStatus', params: { status: 'awaiting_approval' } },
            {
              type: 'record',
              params: ({ context }) => {
                const current = context.current as Current;
                const step = current.step as Extract<ToolStepOutput, { kind: 'execute' }>;
                return {
                  type: 'approval_required',
                  data: { approval_id: current.approvalId as string, tool_call_id: current.call.id, tool: step.tool, args: step.args },
                };
              },
            },
          ],
          after: {
            approvalTimeout: {
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context }) => decision(context, 'timeout', null) },
                assign({ current: ({ context }) => denied(context, 'approval_timeout', 'nobody answered the approval in time') }),
              ],
            },
          },
          on: {
            APPROVE: {
              guard: ({ context, event }) => context.current?.approvalId === event.approvalId,
              target: 'running.executing',
              actions: { type: 'record', params: ({ context, event }) => decision(context, 'approved', event.by) },
            },
            DENY: {
              guard: ({ context, event }) => context.current?.approvalId === event.approvalId,
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context, event }) => decision(context, 'denied', event.by) },
                assign({ current: ({ context }) => denied(context, 'approval_denied', 'the approval was denied') }),
              ],
            },
            CANCEL: {
              target: '#agentRun.cancelled',
              actions: [
                assign({ cancelRequested: true }),
                { type: 'record', params: ({ context }) => decision(context, 'cancelled', null) },
              ],
            },
            SHUTDOWN: {
              target: '#agentRun.failed',
              actions: assign({ failure: { reason: 'shutdown', message: 'the service shut down while the run waited for an approval' } }),
            },
          },
        },
      },
    },
    succeeded: {
      type: 'final',
      entry: { type: 'finalize', params: ({ context }) => end(context, 'succeeded') },
    },
    failed: {
      type: 'final',
      entry: { type: 'finalize', params: ({ context }) => end(context, 'failed') },
    },
    cancelled: {
      type: 'final',
      entry: { type: 'finalize', params: ({ context }) => end(context, 'cancelled') },
    },
  },
  output: ({ context }) => end(context, context.failure ? 'failed' : context.cancelRequested ? 'cancelled' : 'succeeded'),
});

function decision(context: AgentRunContext, verdict: 'approved' | 'denied' | 'timeout' | 'cancelled', by: string | null): RecordEntry {
  const approvalId = context.current?.approvalId ?? '';
  return { type: 'approval_decision', data: { approval_id: approvalId, decision: verdict, decided_by: by } };
}

function denied(context: AgentRunContext, code: string, message: string): Current {
  return { ...(context.current as Current), outcome: failedOutcome(toolErrorBody(code, message)) };
}

function end(context: AgentRunContext, status: FinalStatus): RunEnd {
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

export type AgentRunMachine = typeof agentRunMachine;
export type AgentRunSnapshot = SnapshotFrom<AgentRunMachine>;

/** The run's status as the registry and the store name it. */
export function runStatusOf(snapshot: AgentRunSnapshot): RunStatus {
  if (snapshot.matches('pending')) return 'pending';
  if (snapshot.matches({ active: 'awaiting_approval' })) return 'awaiting_approval';
  if (snapshot.matches('active')) return 'running';
  if (snapshot.matches('succeeded')) return 'succeeded';
  if (snapshot.matches('cancelled')) return 'cancelled';
  return 'failed';
}
