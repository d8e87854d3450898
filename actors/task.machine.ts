/**
 * One task: an actor under the runtime supervisor for as long as the task is
 * enabled. It owns the task's trigger and its run slots:
 *
 * - schedule trigger: waits (a delayed transition on the supervisor's clock)
 *   until the next cron occurrence, fires, and waits for the next one;
 * - webhook and lifecycle triggers: fires arrive as `FIRE` events;
 * - `max_concurrent_runs`: a fire beyond it waits in a FIFO of `pending`
 *   fires, bounded by `maxPending`; a fire at the bound is refused (the
 *   runtime records that run as failed with reason `queue_full`);
 * - disabled or deleted: `STOP` ends the actor and its pending fires are
 *   cancelled; at shutdown (`SHUTDOWN`) pending fires stay stored and are
 *   queued again at the next start.
 *
 * Side effects are named here and supplied by domains/tasks/service.ts.
 */
import { assign, enqueueActions, setup } from 'xstate';

export interface TaskMachineInput {
  readonly taskId: string;
  /** five-field cron, or null for webhook and lifecycle tasks */
  readonly cron: string | null;
  /** the IANA zone the cron is read in */
  readonly timezone: string;
  readonly maxConcurrentRuns: number;
  readonly maxPending: number;
  /** epoch ms of the last occurrence fired (persisted): never fired again */
  readonly lastFiredAt: number | null;
  /** fires stored as pending by a previous process, oldest first */
  readonly pending: readonly string[];
  /** runs a previous process left parked on an approval: they keep their slots until they end */
  readonly running?: readonly string[];
  /** current time on the supervisor's clock */
  readonly now: () => number;
  /** next occurrence strictly after the given time, or null */
  readonly nextOccurrence: (cron: string, timezone: string, afterMs: number) => number | null;
}

export interface TaskMachineContext extends TaskMachineInput {
  readonly running: readonly string[];
  readonly pending: readonly string[];
  readonly nextAt: number | null;
}

export type TaskMachineEvent =
  /** a fire whose run record is stored (status pending) */
  | { readonly type: 'FIRE'; readonly runId: string }
  | { readonly type: 'RUN_ENDED'; readonly runId: string }
  | { readonly type: 'CANCEL_PENDING'; readonly runId: string }
  | { readonly type: 'UPDATE'; readonly cron: string | null; readonly timezone: string; readonly maxConcurrentRuns: number }
  | { readonly type: 'STOP' }
  | { readonly type: 'SHUTDOWN' };

/** the longest timer Node keeps (2^31-1 ms, ~24.8 days) */
const MAX_TIMER_MS = 2_147_483_647;

const notProvided = (name: string) => () => {
  throw new Error(`task: side effect "${name}" was not provided by the runtime`);
};

export const taskMachine = setup({
  types: {
    context: {} as TaskMachineContext,
    events: {} as TaskMachineEvent,
    input: {} as TaskMachineInput,
  },
  actions: {
    /** starts the agent run of a stored fire */
    launch: (_args, _params: { runId: string }) => notProvided('launch')(),
    /** records a fire refused at the pending bound */
    refuse: (_args, _params: { runId: string }) => notProvided('refuse')(),
    /** records pending fires as cancelled */
    cancelPending: (_args, _params: { runIds: readonly string[] }) => notProvided('cancelPending')(),
    /** a schedule occurrence came: persist it as fired, store a run and send FIRE */
    scheduledFire: (_args, _params: { occurrence: number }) => notProvided('scheduledFire')(),
  },
  delays: {
    // a timer longer than 2^31-1 ms fires at once: a far occurrence (a yearly cron) is reached in capped steps
    untilNextFire: ({ context }) => Math.min(MAX_TIMER_MS, Math.max(0, (context.nextAt ?? 0) - context.now())),
  },
  guards: {
    isSchedule: ({ context }) => context.cron !== null,
    hasNext: ({ context }) => context.nextAt !== null,
  },
}).createMachine({
  id: 'task',
  initial: 'active',
  context: ({ input }) => ({ ...input, running: [...(input.running ?? [])], pending: [...input.pending], nextAt: null }),
  // fires stored as pending before a restart start first, in order
  entry: enqueueActions(({ context, enqueue }) => {
    const free = Math.max(0, context.maxConcurrentRuns - context.running.length);
    const start = context.pending.slice(0, free);
    if (start.length === 0) return;
    enqueue.assign({ running: [...context.running, ...start], pending: context.pending.slice(start.length) });
    for (const runId of start) enqueue({ type: 'launch', params: { runId } });
  }),
  states: {
    active: {
      initial: 'choosing',
      on: {
        FIRE: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (context.running.length < context.maxConcurrentRuns) {
              enqueue.assign({ running: [...context.running, event.runId] });
              enqueue({ type: 'launch', params: { runId: event.runId } });
            } else if (context.pending.length < context.maxPending) {
              enqueue.assign({ pending: [...context.pending, event.runId] });
            } else {
              enqueue({ type: 'refuse', params: { runId: event.runId } });
            }
          }),
        },
        RUN_ENDED: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const running = context.running.filter((id) => id !== event.runId);
            const free = Math.max(0, context.maxConcurrentRuns - running.length);
            const start = context.pending.slice(0, free);
            enqueue.assign({ running: [...running, ...start], pending: context.pending.slice(start.length) });
            for (const runId of start) enqueue({ type: 'launch', params: { runId } });
          }),
        },
        CANCEL_PENDING: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (!context.pending.includes(event.runId)) return;
            enqueue.assign({ pending: context.pending.filter((id) => id !== event.runId) });
            enqueue({ type: 'cancelPending', params: { runIds: [event.runId] } });
          }),
        },
        UPDATE: {
          target: '.choosing',
          reenter: true,
          actions: enqueueActions(({ context, event, enqueue }) => {
            const running = [...context.running];
            const free = Math.max(0, event.maxConcurrentRuns - running.length);
            const start = context.pending.slice(0, free);
            enqueue.assign({
              cron: event.cron,
              timezone: event.timezone,
              maxConcurrentRuns: event.maxConcurrentRuns,
              running: [...running, ...start],
              pending: context.pending.slice(start.length),
            });
            for (const runId of start) enqueue({ type: 'launch', params: { runId } });
          }),
        },
        STOP: {
          target: 'stopped',
          actions: enqueueActions(({ context, enqueue }) => {
            if (context.pending.length > 0) enqueue({ type: 'cancelPending', params: { runIds: context.pending } });
            enqueue.assign({ pending: [] });
          }),
        },
        SHUTDOWN: { target: 'stopped' },
      },
      states: {
        choosing: {
          always: [{ guard: 'isSchedule', target: 'scheduled' }, { target: 'listening' }],
        },
        /** waiting for fires from outside (webhook, lifecycle, manual, replay, sample) */
        listening: {},
        scheduled: {
          entry: assign({
            // the next occurrence after now, and never one already fired (a clock that moved back)
            nextAt: ({ context }) =>
              context.cron === null ? null : context.nextOccurrence(context.cron, context.timezone, Math.max(context.now(), context.lastFiredAt ?? -Infinity)),
          }),
          always: { guard: ({ context }) => context.nextAt === null, target: 'listening' },
          after: {
            untilNextFire: [
              // woke before the occurrence (a capped timer step, see MAX_TIMER_MS): wait again
              { guard: ({ context }) => context.nextAt !== null && context.now() < context.nextAt, target: 'scheduled', reenter: true },
              {
                target: 'scheduled',
                reenter: true,
                actions: [
                  assign({ lastFiredAt: ({ context }) => context.nextAt }),
                  { type: 'scheduledFire', params: ({ context }) => ({ occurrence: context.nextAt ?? 0 }) },
                ],
              },
            ],
          },
        },
      },
    },
    stopped: { type: 'final' },
  },
});

export type TaskActorState = 'scheduled' | 'listening' | 'stopped';

export function taskStateOf(snapshot: { matches(value: unknown): boolean }): TaskActorState {
  if (snapshot.matches({ active: 'scheduled' })) return 'scheduled';
  if (snapshot.matches('active')) return 'listening';
  return 'stopped';
}
