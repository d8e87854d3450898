/**
 * The agent run machine's vocabulary: its types, the side effects it names
 * (supplied by runtime/agent/agent-runtime.ts through `.provide()`), the
 * context updates its transitions make, its guards and its delays. The
 * states that use them are in agent-run.machine.ts.
 */
import { assign, fromPromise, setup } from 'xstate';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../runtime/tools/tool-result.js';
import type { ChatMessage, ToolCall } from '../runtime/llm/types.js';
import { afterTurn, approvalIdOf, currentOf, deferredWaitOf, denied, failureOf, toolMessage } from './agent-run.context.js';
import type {
  AgentRunContext,
  AgentRunEvent,
  AgentRunInput,
  DeferredWait,
  ExecuteStep,
  ExecutedTool,
  Failure,
  RecordEntry,
  RunEnd,
  TakenTurn,
  ToolStepOutput,
  TurnOutput,
} from './agent-run.types.js';

const notProvided = (name: string) => () => {
  throw new Error(`agent run: side effect "${name}" was not provided by the runtime`);
};

export const agentRunSetup = setup({
  types: {
    context: {} as AgentRunContext,
    events: {} as AgentRunEvent,
    input: {} as AgentRunInput,
    output: {} as RunEnd,
  },
  actors: {
    /** model turn `turn` over the conversation so far (its text deltas streamed out by the runtime), or its hand-over */
    llmTurn: fromPromise<TakenTurn, { runId: string; turn: number; messages: readonly ChatMessage[] }>(notProvided('llmTurn')),
    /** what to do with a tool call: a result already (meta-tools, refusals) or a connector tool to execute */
    toolStep: fromPromise<ToolStepOutput, { runId: string; call: ToolCall }>(notProvided('toolStep')),
    /** executes a connector tool the step resolved (its outcome, or the hand-over of its result) */
    runTool: fromPromise<ExecutedTool, { runId: string; call: ToolCall; resolved: unknown }>(notProvided('runTool')),
  },
  actions: {
    /** appends to the run's transcript (persisted and streamed) */
    record: (_args, _entry: RecordEntry) => notProvided('record')(),
    /** persists a non-final status */
    setStatus: (_args, _status: { status: 'running' | 'awaiting_approval' }) => notProvided('setStatus')(),
    /** persists the end of the run and closes its stream */
    finalize: (_args, _end: RunEnd) => notProvided('finalize')(),
    /** the run waits for its handed-over model turn (it may park; the site that performs it is told) */
    awaitTurn: (_args) => notProvided('awaitTurn')(),

    requestCancel: assign({ cancelRequested: true }),
    requestShutdown: assign({ shutdownRequested: true }),
    fail: assign((_args, failure: Failure) => ({ failure })),
    costCapExceeded: assign({
      failure: ({ context }) => ({
        reason: 'cost_cap_exceeded',
        message: `today's spend ${(context.spentTodayUsd + context.costUsd).toFixed(6)} USD is over the cap of ${context.costCapUsd} USD`,
      }),
    }),
    /** the turn's assistant message joins the conversation; its tool calls wait their turn */
    takeTurn: assign(({ context }, out: TurnOutput) => afterTurn(context, out)),
    takeNextCall: assign(({ context }) => ({
      current: { call: context.pending[0] as ToolCall, step: null, outcome: null, approvalId: null, deferred: null },
      pending: context.pending.slice(1),
    })),
    setOutcome: assign({ current: ({ context }, outcome: ToolOutcome) => ({ ...currentOf(context), outcome }) }),
    setDeferred: assign({ current: ({ context }, deferred: DeferredWait) => ({ ...currentOf(context), deferred }) }),
    setTurnWait: assign((_args, turnWait: DeferredWait) => ({ turnWait })),
    setStep: assign({ current: ({ context }, step: ExecuteStep) => ({ ...currentOf(context), step }) }),
    askApproval: assign(({ context }, step: ExecuteStep) => ({
      approvals: context.approvals + 1,
      current: { ...currentOf(context), step, approvalId: approvalIdOf(context.runId, context.approvals + 1) },
    })),
    /** the call's outcome goes back to the model as a tool message */
    answerCall: assign(({ context }) => {
      const current = currentOf(context);
      context.messages.push(toolMessage(current.call, current.outcome as ToolOutcome));
      return { current: null };
    }),
    denyCall: assign({ current: ({ context }, { code, message }: { code: string; message: string }) => denied(context, code, message) }),
    /** a tool step that threw becomes a result the model can read, never a crashed run */
    toolStepFailed: assign({
      current: ({ context, event }) => ({
        ...currentOf(context),
        outcome: failedOutcome(toolErrorBody('tool_failed', failureOf((event as { error?: unknown }).error).message)),
      }),
    }),
  },
  delays: {
    approvalTimeout: ({ context }) => context.approvalTimeoutMs,
    runTimeout: ({ context }) => context.timeoutMs,
  },
  guards: {
    cancelRequested: ({ context }) => context.cancelRequested,
    /** parked in an approval wait or waiting for a handed-over result or model turn */
    resuming: ({ context }) => (context.current?.approvalId ?? deferredWaitOf(context)) !== null,
    shutdownRequested: ({ context }) => context.shutdownRequested,
    overCostCap: ({ context }) => context.costCapUsd !== null && context.spentTodayUsd + context.costUsd > context.costCapUsd,
    noToolCalls: ({ context }) => context.pending.length === 0,
    outOfTurns: ({ context }) => context.turns >= context.maxTurns,
    hasResult: (_args, step: ToolStepOutput) => step.kind === 'result',
    /** reads run at once; writes too when the run allows them */
    runsUnasked: ({ context }, step: ToolStepOutput) => step.kind === 'execute' && (step.effect === 'read' || context.approvalWrite === 'allow'),
    isCurrentApproval: ({ context }, approvalId: string) => context.current?.approvalId === approvalId,
    waitsForApproval: ({ context }) => (context.current?.approvalId ?? null) !== null,
    handedOver: (_args, executed: ExecutedTool | TakenTurn) => 'deferred' in executed,
    isCurrentWait: ({ context }, key: string) => context.current?.deferred?.keys.includes(key) === true,
    isCurrentTurn: ({ context }, key: string) => context.turnWait?.keys.includes(key) === true,
    isTurnFailure: ({ context }, event: Extract<AgentRunEvent, { type: 'DEFERRED_TURN' }>) =>
      'failure' in event && context.turnWait?.keys.includes(event.key) === true,
  },
});
