/**
 * The agent run: `pending` -> `running` (<-> `awaiting_approval`) ->
 * `succeeded` | `failed` | `cancelled`. A tool result or a model turn handed
 * over to somebody else is waited for in `awaiting_result` / `awaiting_turn`
 * (both count as `running`); a run parked in any wait comes back in `parked`.
 *
 * One loop: ask the model (with the two catalog meta-tools), then handle each
 * tool call it made, then ask again, until it answers without tool calls.
 * Every side effect is named (agent-run.setup.ts) and supplied by the runtime
 * (runtime/agent/agent-runtime.ts) through `.provide()`: the model turn, the
 * tool steps, the transcript, the persistence of the status. Failure is a
 * state with a reason, never an exception. Types: agent-run.types.ts; the
 * context's pure functions: agent-run.context.ts.
 *
 * Cancellation and shutdown are flags set by events; the loop checks them
 * between turns and after every tool call (an approval wait ends at once).
 * Ending reasons of `failed`: `max_turns`, `timeout`, `cost_cap_exceeded`,
 * `shutdown`, the LLM error codes (`llm_unconfigured`, `llm_provider_error`,
 * `llm_rate_limited`, `llm_unreachable`, ...), `internal_error`.
 */
import type { SnapshotFrom } from 'xstate';
import type { ToolOutcome } from '../runtime/tools/tool-result.js';
import { currentOf, decision, end, failureOf, initialContext, turnEntry } from './agent-run.context.js';
import { agentRunSetup } from './agent-run.setup.js';
import type {
  AgentRunContext,
  AgentRunEvent,
  DeferredWait,
  ExecutedTool,
  ExecuteStep,
  Failure,
  RunStatus,
  TakenTurn,
  ToolStepOutput,
  TurnOutput,
} from './agent-run.types.js';

// chat.ts names the run's approval setting from here
const SHUTDOWN_DURING_RUN = { type: 'fail', params: { reason: 'shutdown', message: 'the service shut down during the run' } } as const;
/** SHUTDOWN in a state waiting for something: the run fails, saying what it waited for */
const shutDownWhileWaitingFor = (what: string) =>
  ({
    target: '#agentRun.failed',
    actions: { type: 'fail', params: { reason: 'shutdown', message: `the service shut down while the run waited for ${what}` } },
  }) as const;
const resultOf = (step: ToolStepOutput): ToolOutcome => (step as Extract<ToolStepOutput, { kind: 'result' }>).outcome;
const turnOutputOf = (event: Extract<AgentRunEvent, { type: 'DEFERRED_TURN' }>): TurnOutput => (event as { output: TurnOutput }).output;
const handOverOf = (executed: ExecutedTool | TakenTurn): DeferredWait => (executed as { deferred: DeferredWait }).deferred;
/** a handed-over result arrives (live or parked): the call is answered with it */
const DEFERRED_RESULT = {
  guard: { type: 'isCurrentWait', params: ({ event }: { event: Extract<AgentRunEvent, { type: 'DEFERRED_RESULT' }> }) => event.key },
  target: '#agentRun.active.running.afterTool',
  actions: { type: 'setOutcome', params: ({ event }: { event: Extract<AgentRunEvent, { type: 'DEFERRED_RESULT' }> }) => event.outcome },
} as const;
type DeferredTurnEvent = Extract<AgentRunEvent, { type: 'DEFERRED_TURN' }>;
/** a handed-over model turn's result arrives (live or parked): taken as a turn of the run's own, or its failure ends the run */
const DEFERRED_TURN = [
  {
    guard: { type: 'isTurnFailure', params: ({ event }: { event: DeferredTurnEvent }) => event },
    target: '#agentRun.failed',
    actions: { type: 'fail', params: ({ event }: { event: DeferredTurnEvent }) => (event as { failure: Failure }).failure },
  },
  {
    guard: { type: 'isCurrentTurn', params: ({ event }: { event: DeferredTurnEvent }) => event.key },
    target: '#agentRun.active.running.afterTurn',
    actions: [
      { type: 'takeTurn', params: ({ event }: { event: DeferredTurnEvent }) => turnOutputOf(event) },
      { type: 'record', params: ({ context, event }: { context: AgentRunContext; event: DeferredTurnEvent }) => turnEntry(context, turnOutputOf(event)) },
    ],
  },
] as const;

export const agentRunMachine = agentRunSetup.createMachine({
  id: 'agentRun',
  initial: 'pending',
  context: ({ input }) => initialContext(input),
  on: {
    CANCEL: { actions: 'requestCancel' },
    SHUTDOWN: { actions: 'requestShutdown' },
  },
  states: {
    pending: {
      on: {
        // a parked run coming back starts in its approval wait again
        START: [{ guard: 'resuming', target: '#agentRun.active.parked' }, { target: 'active' }],
        CANCEL: { target: 'cancelled', actions: 'requestCancel' },
        SHUTDOWN: { target: 'failed', actions: { type: 'fail', params: { reason: 'shutdown', message: 'the service shut down before the run started' } } },
      },
    },
    active: {
      initial: 'running',
      after: {
        runTimeout: {
          target: 'failed',
          actions: { type: 'fail', params: ({ context }) => ({ reason: 'timeout', message: `the run took longer than ${context.timeoutMs} ms` }) },
        },
      },
      on: {
        RUN_TIMEOUT: {
          target: 'failed',
          actions: { type: 'fail', params: ({ context }) => ({ reason: 'timeout', message: `the run took longer than ${context.timeoutMs} ms` }) },
        },
      },
      states: {
        running: {
          initial: 'budget',
          entry: { type: 'setStatus', params: { status: 'running' } },
          states: {
            /** today's spend may already be over the cap before the first turn */
            budget: {
              always: [{ guard: 'overCostCap', target: '#agentRun.failed', actions: 'costCapExceeded' }, { target: 'turn' }],
            },
            turn: {
              invoke: {
                src: 'llmTurn',
                input: ({ context }) => ({ runId: context.runId, turn: context.turns + 1, messages: context.messages }),
                onDone: [
                  {
                    guard: { type: 'handedOver', params: ({ event }) => event.output },
                    target: '#agentRun.active.awaiting_turn',
                    actions: { type: 'setTurnWait', params: ({ event }) => handOverOf(event.output) },
                  },
                  {
                    target: 'afterTurn',
                    actions: [
                      { type: 'takeTurn', params: ({ event }) => event.output as TurnOutput },
                      { type: 'record', params: ({ context, event }) => turnEntry(context, event.output as TurnOutput) },
                    ],
                  },
                ],
                onError: { target: '#agentRun.failed', actions: { type: 'fail', params: ({ event }) => failureOf(event.error) } },
              },
            },
            afterTurn: {
              always: [
                { guard: 'cancelRequested', target: '#agentRun.cancelled' },
                { guard: 'shutdownRequested', target: '#agentRun.failed', actions: SHUTDOWN_DURING_RUN },
                { guard: 'overCostCap', target: '#agentRun.failed', actions: 'costCapExceeded' },
                { guard: 'noToolCalls', target: '#agentRun.succeeded' },
                {
                  guard: 'outOfTurns',
                  target: '#agentRun.failed',
                  actions: {
                    type: 'fail',
                    params: ({ context }) => ({ reason: 'max_turns', message: `the model still calls tools after ${context.maxTurns} turns` }),
                  },
                },
                { target: 'nextTool' },
              ],
            },
            nextTool: {
              always: [
                { guard: 'noToolCalls', target: 'budget' },
                { target: 'toolStep', actions: 'takeNextCall' },
              ],
            },
            toolStep: {
              entry: {
                type: 'record',
                params: ({ context }) => {
                  const { call } = currentOf(context);
                  return { type: 'tool_call_start', data: { tool_call_id: call.id, name: call.name, arguments: call.arguments } };
                },
              },
              invoke: {
                src: 'toolStep',
                input: ({ context }) => ({ runId: context.runId, call: currentOf(context).call }),
                onDone: [
                  {
                    guard: { type: 'hasResult', params: ({ event }) => event.output },
                    target: 'afterTool',
                    actions: { type: 'setOutcome', params: ({ event }) => resultOf(event.output) },
                  },
                  {
                    guard: { type: 'runsUnasked', params: ({ event }) => event.output },
                    target: 'executing',
                    actions: { type: 'setStep', params: ({ event }) => event.output as ExecuteStep },
                  },
                  { target: '#agentRun.active.awaiting_approval', actions: { type: 'askApproval', params: ({ event }) => event.output as ExecuteStep } },
                ],
                onError: { target: 'afterTool', actions: 'toolStepFailed' },
              },
            },
            executing: {
              invoke: {
                src: 'runTool',
                input: ({ context }) => {
                  const current = currentOf(context);
                  return { runId: context.runId, call: current.call, resolved: current.step?.resolved };
                },
                onDone: [
                  {
                    guard: { type: 'handedOver', params: ({ event }) => event.output },
                    target: '#agentRun.active.awaiting_result',
                    actions: { type: 'setDeferred', params: ({ event }) => handOverOf(event.output) },
                  },
                  { target: 'afterTool', actions: { type: 'setOutcome', params: ({ event }) => event.output as ToolOutcome } },
                ],
                onError: { target: 'afterTool', actions: 'toolStepFailed' },
              },
            },
            afterTool: {
              entry: [
                {
                  type: 'record',
                  params: ({ context }) => {
                    const { call, outcome } = currentOf(context);
                    return { type: 'tool_result', data: { tool_call_id: call.id, name: call.name, outcome: outcome as ToolOutcome } };
                  },
                },
                'answerCall',
              ],
              always: [
                { guard: 'cancelRequested', target: '#agentRun.cancelled' },
                { guard: 'shutdownRequested', target: '#agentRun.failed', actions: SHUTDOWN_DURING_RUN },
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
                const { call, step, approvalId } = currentOf(context);
                const { tool, args } = step as ExecuteStep;
                return { type: 'approval_required', data: { approval_id: approvalId as string, tool_call_id: call.id, tool, args } };
              },
            },
          ],
          after: {
            approvalTimeout: {
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context }) => decision(context, 'timeout', null) },
                { type: 'denyCall', params: { code: 'approval_timeout', message: 'nobody answered the approval in time' } },
              ],
            },
          },
          on: {
            APPROVE: {
              guard: { type: 'isCurrentApproval', params: ({ event }) => event.approvalId },
              target: 'running.executing',
              actions: { type: 'record', params: ({ context, event }) => decision(context, 'approved', event.by) },
            },
            DENY: {
              guard: { type: 'isCurrentApproval', params: ({ event }) => event.approvalId },
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context, event }) => decision(context, 'denied', event.by) },
                { type: 'denyCall', params: { code: 'approval_denied', message: 'the approval was denied' } },
              ],
            },
            CANCEL: {
              target: '#agentRun.cancelled',
              actions: ['requestCancel', { type: 'record', params: ({ context }) => decision(context, 'cancelled', null) }],
            },
            SHUTDOWN: shutDownWhileWaitingFor('an approval'),
          },
        },
        /** the current call handed its result over (a media job): it comes as DEFERRED_RESULT, here or after the run was parked */
        awaiting_result: {
          entry: {
            type: 'record',
            params: ({ context }) => {
              const { call, deferred } = currentOf(context);
              const wait = deferred as DeferredWait;
              return { type: 'tool_deferred', data: { tool_call_id: call.id, kind: wait.kind, keys: wait.keys } };
            },
          },
          on: {
            DEFERRED_RESULT: DEFERRED_RESULT,
            CANCEL: { target: '#agentRun.cancelled', actions: 'requestCancel' },
            SHUTDOWN: shutDownWhileWaitingFor('a tool result'),
          },
        },
        /** the model turn was handed over (a worker performs it): its result comes as DEFERRED_TURN, here or after the run was parked */
        awaiting_turn: {
          entry: 'awaitTurn',
          on: {
            DEFERRED_TURN: DEFERRED_TURN,
            // nobody is paying for a turn still queued; one a worker holds finishes there, unheard
            CANCEL: { target: '#agentRun.cancelled', actions: 'requestCancel' },
            SHUTDOWN: shutDownWhileWaitingFor('a model turn'),
          },
        },
        /** a parked run brought back (runtime/agent/parking.ts): the wait's entries ran before it was parked */
        parked: {
          on: {
            DEFERRED_RESULT: DEFERRED_RESULT,
            DEFERRED_TURN: DEFERRED_TURN,
            APPROVAL_TIMEOUT: {
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context }) => decision(context, 'timeout', null) },
                { type: 'denyCall', params: { code: 'approval_timeout', message: 'nobody answered the approval in time' } },
              ],
            },
            APPROVE: {
              guard: { type: 'isCurrentApproval', params: ({ event }) => event.approvalId },
              target: 'running.executing',
              actions: { type: 'record', params: ({ context, event }) => decision(context, 'approved', event.by) },
            },
            DENY: {
              guard: { type: 'isCurrentApproval', params: ({ event }) => event.approvalId },
              target: 'running.afterTool',
              actions: [
                { type: 'record', params: ({ context, event }) => decision(context, 'denied', event.by) },
                { type: 'denyCall', params: { code: 'approval_denied', message: 'the approval was denied' } },
              ],
            },
            // parked on a handed-over result there is no approval to close
            CANCEL: [
              {
                guard: 'waitsForApproval',
                target: '#agentRun.cancelled',
                actions: ['requestCancel', { type: 'record', params: ({ context }) => decision(context, 'cancelled', null) }],
              },
              { target: '#agentRun.cancelled', actions: 'requestCancel' },
            ],
            SHUTDOWN: shutDownWhileWaitingFor('an approval'),
          },
        },
      },
    },
    succeeded: { type: 'final', entry: { type: 'finalize', params: ({ context }) => end(context, 'succeeded') } },
    failed: { type: 'final', entry: { type: 'finalize', params: ({ context }) => end(context, 'failed') } },
    cancelled: { type: 'final', entry: { type: 'finalize', params: ({ context }) => end(context, 'cancelled') } },
  },
  output: ({ context }) => end(context, context.failure ? 'failed' : context.cancelRequested ? 'cancelled' : 'succeeded'),
});

type AgentRunMachine = typeof agentRunMachine;
export type AgentRunSnapshot = SnapshotFrom<AgentRunMachine>;

/** The run's status as the registry and the store name it. */
export function runStatusOf(snapshot: AgentRunSnapshot): RunStatus {
  if (snapshot.matches('pending')) return 'pending';
  if (snapshot.matches({ active: 'awaiting_approval' })) return 'awaiting_approval';
  // parked on a handed-over result, the run is still running its tool call
  if (snapshot.matches({ active: 'parked' })) return snapshot.context.current?.approvalId ? 'awaiting_approval' : 'running';
  if (snapshot.matches('active')) return 'running';
  if (snapshot.matches('succeeded')) return 'succeeded';
  if (snapshot.matches('cancelled')) return 'cancelled';
  return 'failed';
}
