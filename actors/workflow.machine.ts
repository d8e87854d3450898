/**
 * One workflow run: an actor under the runtime supervisor from the run's
 * start until its end. It owns the run's step states and decides what runs
 * next; the orchestrator (domains/orchestrator/runner.ts) supplies the effects.
 *
 * - A pending step whose needs are all finished starts (parallel fan-out:
 *   every such step starts at once; a join is a step needing several). A
 *   step whose needs were all skipped is skipped; a `when` that does not hold
 *   skips it too. An approval step waits for `DECIDE`.
 * - A failed step (or a denied approval, or the workflow's cost cap crossed)
 *   fails the run; `CANCEL` cancels it. Either way the pending steps are
 *   cancelled, running agent steps are cancelled through the launcher and
 *   the run ends once they have reported their end; a running gateway step
 *   is cancelled at once and its dispatch cancelled (`cancelDispatch`).
 * - Every change is handed to `persist` with the whole step list, so a
 *   restart resumes from the stored states. `SHUTDOWN` stops the actor as it
 *   is (the stored run stays running; the next process resumes it).
 */
import { enqueueActions, setup } from 'xstate';

type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'waiting_approval';
export type WorkflowRunStatus = 'running' | 'waiting_approval' | 'succeeded' | 'failed' | 'cancelled';

export interface WorkflowStepState {
  readonly id: string;
  readonly kind: 'agent' | 'approval' | 'gateway';
  readonly status: StepStatus;
  /** the step's current (or last) agent run */
  readonly agent_run_id: string | null;
  /** an agent's reply (parsed JSON when it is JSON), a gateway's output, an approval's decision */
  readonly output: unknown;
  readonly cost_usd: number;
  /** why it failed, was skipped or cancelled */
  readonly reason: string | null;
  readonly error: string | null;
  /** how many times it was started (a restart starts an interrupted step again) */
  readonly attempts: number;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  /** approval steps: who decided, and their comment */
  readonly decided_by: string | null;
  readonly comment: string | null;
}

/** What the machine needs of a step's definition. */
interface WorkflowStepSpec {
  readonly id: string;
  readonly kind: WorkflowStepState['kind'];
  readonly needs: readonly string[];
  readonly hasCondition: boolean;
}

export interface WorkflowOutcome {
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly reason: string | null;
  readonly message: string | null;
}

export interface WorkflowMachineInput {
  readonly runId: string;
  readonly specs: readonly WorkflowStepSpec[];
  /** stored states (all pending for a new run) */
  readonly steps: readonly WorkflowStepState[];
  readonly costCapUsd: number | null;
  readonly costUsd: number;
  /** a resumed run that was already failing or being cancelled */
  readonly outcome: WorkflowOutcome | null;
  /** ISO time on the supervisor's clock */
  readonly nowIso: () => string;
  /** an id for a step's agent run */
  readonly newRunId: () => string;
  /** whether the step's `when` holds on the current states */
  readonly conditionHolds: (stepId: string, steps: readonly WorkflowStepState[]) => boolean;
}

export type WorkflowMachineContext = WorkflowMachineInput;

export type WorkflowMachineEvent =
  | {
      readonly type: 'STEP_ENDED';
      readonly stepId: string;
      /** the agent run that ended (null for a gateway step): a stale run's end is ignored */
      readonly agentRunId: string | null;
      readonly status: 'succeeded' | 'failed' | 'cancelled';
      readonly output: unknown;
      readonly costUsd: number;
      readonly reason: string | null;
      readonly error: string | null;
    }
  | { readonly type: 'DECIDE'; readonly stepId: string; readonly approved: boolean; readonly by: string; readonly comment: string | null }
  | { readonly type: 'CANCEL'; readonly by: string }
  | { readonly type: 'SHUTDOWN' };

export interface PersistParams {
  readonly status: WorkflowRunStatus;
  readonly outcome: WorkflowOutcome | null;
  readonly steps: readonly WorkflowStepState[];
  readonly costUsd: number;
  /** true once the run is over */
  readonly final: boolean;
}

export interface LaunchParams {
  readonly stepId: string;
  readonly agentRunId: string | null;
  readonly steps: readonly WorkflowStepState[];
  /** what is left of the workflow's cost cap (null: no cap) */
  readonly remainingUsd: number | null;
}

const ACTIVE: ReadonlySet<StepStatus> = new Set(['pending', 'running', 'waiting_approval']);

const isStepActive = (status: StepStatus): boolean => ACTIVE.has(status);

const notProvided = (name: string) => () => {
  throw new Error(`workflow: side effect "${name}" was not provided by the runtime`);
};

type Patch = Partial<Omit<WorkflowStepState, 'id' | 'kind'>>;

interface Plan {
  readonly steps: WorkflowStepState[];
  readonly outcome: WorkflowOutcome | null;
  readonly costUsd: number;
  readonly launches: LaunchParams[];
  readonly cancels: { stepId: string; agentRunId: string }[];
  /** running gateway steps the outcome cancelled: their dispatches are cancelled */
  readonly dispatchCancels: string[];
}

/** The run's status as stored and shown. */
function runStatusOf(steps: readonly WorkflowStepState[], outcome: WorkflowOutcome | null): WorkflowRunStatus {
  const running = steps.some((step) => step.status === 'running');
  if (outcome && !running) return outcome.status;
  if (!running && steps.some((step) => step.status === 'waiting_approval')) return 'waiting_approval';
  return 'running';
}

/** Starts what is ready, skips what cannot run, settles the end: a pure step of the run. */
function advance(context: WorkflowMachineContext, changed: WorkflowStepState[], outcomeIn: WorkflowOutcome | null, costUsd: number): Plan {
  const steps = [...changed];
  let outcome = outcomeIn;
  const launches: LaunchParams[] = [];
  const cancels: { stepId: string; agentRunId: string }[] = [];
  const dispatchCancels: string[] = [];
  const index = new Map(steps.map((step, i) => [step.id, i]));
  const set = (id: string, patch: Patch): void => {
    const i = index.get(id);
    if (i !== undefined) steps[i] = { ...steps[i]!, ...patch };
  };
  const stateOf = (id: string) => steps[index.get(id) ?? -1];
  if (outcome === null && context.costCapUsd !== null && costUsd > context.costCapUsd) {
    outcome = {
      status: 'failed',
      reason: 'cost_cap_exceeded',
      message: `the run's cost ${costUsd.toFixed(6)} USD is over the workflow's cap of ${context.costCapUsd} USD`,
    };
  }
  for (let progress = outcome === null; progress && outcome === null;) {
    progress = false;
    for (const spec of context.specs) {
      const state = stateOf(spec.id);
      if (!state || state.status !== 'pending') continue;
      const needs = spec.needs.map(stateOf);
      if (needs.some((need) => need === undefined || isStepActive(need.status))) continue;
      progress = true;
      const at = context.nowIso();
      if (needs.length > 0 && needs.every((need) => need?.status === 'skipped')) {
        set(spec.id, { status: 'skipped', reason: 'needs_skipped', finished_at: at });
      } else if (spec.hasCondition && !context.conditionHolds(spec.id, steps)) {
        set(spec.id, { status: 'skipped', reason: 'condition_false', finished_at: at });
      } else if (spec.kind === 'approval') {
        set(spec.id, { status: 'waiting_approval', started_at: at });
      } else {
        const agentRunId = spec.kind === 'agent' ? context.newRunId() : null;
        set(spec.id, { status: 'running', agent_run_id: agentRunId, attempts: state.attempts + 1, started_at: at, reason: null, error: null });
        launches.push({ stepId: spec.id, agentRunId, steps: [], remainingUsd: context.costCapUsd === null ? null : Math.max(0, context.costCapUsd - costUsd) });
      }
    }
  }
  if (outcome === null && steps.every((step) => !isStepActive(step.status))) outcome = { status: 'succeeded', reason: null, message: null };
  if (outcome !== null) {
    const at = context.nowIso();
    const why = outcome.status === 'cancelled' ? 'cancelled' : 'run_failed';
    for (const step of steps) {
      if (step.status === 'pending' || step.status === 'waiting_approval') set(step.id, { status: 'cancelled', reason: why, finished_at: at });
      else if (step.status === 'running' && step.agent_run_id === null) {
        set(step.id, { status: 'cancelled', reason: why, finished_at: at });
        if (step.kind === 'gateway') dispatchCancels.push(step.id);
      } else if (step.status === 'running' && step.agent_run_id !== null) cancels.push({ stepId: step.id, agentRunId: step.agent_run_id });
    }
  }
  return { steps, outcome, costUsd, launches: launches.map((launch) => ({ ...launch, steps })), cancels, dispatchCancels };
}

export const workflowMachine = setup({
  types: {
    context: {} as WorkflowMachineContext,
    events: {} as WorkflowMachineEvent,
    input: {} as WorkflowMachineInput,
  },
  actions: {
    /** starts an agent step's run or a gateway step's dispatch; reports back with STEP_ENDED */
    launch: (_args, _params: LaunchParams) => notProvided('launch')(),
    /** cancels a running agent step's run (it reports back with STEP_ENDED) */
    cancelStep: (_args, _params: { stepId: string; agentRunId: string }) => notProvided('cancelStep')(),
    /** cancels a running gateway step's dispatch (the step is already cancelled) */
    cancelDispatch: (_args, _params: { stepId: string }) => notProvided('cancelDispatch')(),
    /** stores the run's step states, cost and status */
    persist: (_args, _params: PersistParams) => notProvided('persist')(),
  },
  guards: {
    over: ({ context }) => context.outcome !== null && !context.steps.some((step) => step.status === 'running'),
  },
}).createMachine({
  id: 'workflow',
  context: ({ input }) => ({ ...input }),
  initial: 'active',
  states: {
    active: {
      entry: enqueueActions(({ context, enqueue }) => run(enqueue, apply(context, [...context.steps], context.outcome, context.costUsd))),
      always: { guard: 'over', target: 'done' },
      on: {
        STEP_ENDED: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const state = context.steps.find((step) => step.id === event.stepId);
            if (!state || state.status !== 'running' || state.agent_run_id !== event.agentRunId) return;
            const costUsd = context.costUsd + event.costUsd;
            const ended: WorkflowStepState = {
              ...state,
              status: event.status,
              output: event.output,
              cost_usd: state.cost_usd + event.costUsd,
              reason: event.reason,
              error: event.error,
              finished_at: context.nowIso(),
            };
            let outcome = context.outcome;
            if (outcome === null && event.status !== 'succeeded') {
              const why = event.reason ?? event.status;
              outcome = {
                status: 'failed',
                reason: event.status === 'cancelled' ? 'step_cancelled' : 'step_failed',
                message: `step ${event.stepId} ${event.status}: ${why}${event.error ? `: ${event.error}` : ''}`,
              };
            }
            run(
              enqueue,
              apply(
                context,
                context.steps.map((step) => (step.id === event.stepId ? ended : step)),
                outcome,
                costUsd,
              ),
            );
          }),
        },
        DECIDE: {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const state = context.steps.find((step) => step.id === event.stepId);
            if (!state || state.status !== 'waiting_approval' || context.outcome !== null) return;
            const decided: WorkflowStepState = {
              ...state,
              status: event.approved ? 'succeeded' : 'failed',
              output: { approved: event.approved, comment: event.comment },
              reason: event.approved ? null : 'approval_denied',
              error: event.approved ? null : 'the approval was denied',
              decided_by: event.by,
              comment: event.comment,
              finished_at: context.nowIso(),
            };
            const outcome: WorkflowOutcome | null = event.approved
              ? null
              : { status: 'failed', reason: 'approval_denied', message: `step ${event.stepId}: the approval was denied` };
            run(
              enqueue,
              apply(
                context,
                context.steps.map((step) => (step.id === event.stepId ? decided : step)),
                outcome,
                context.costUsd,
              ),
            );
          }),
        },
        CANCEL: {
          actions: enqueueActions(({ context, enqueue }) => {
            if (context.outcome !== null) return;
            run(enqueue, apply(context, [...context.steps], { status: 'cancelled', reason: 'cancelled', message: 'the run was cancelled' }, context.costUsd));
          }),
        },
        SHUTDOWN: { target: 'stopped' },
      },
    },
    done: { type: 'final' },
    /** shut down mid-run: the stored run resumes in the next process */
    stopped: { type: 'final' },
  },
});

type Effect =
  | { readonly type: 'persist'; readonly params: PersistParams }
  | { readonly type: 'launch'; readonly params: LaunchParams }
  | { readonly type: 'cancelStep'; readonly params: { stepId: string; agentRunId: string } }
  | { readonly type: 'cancelDispatch'; readonly params: { stepId: string } };

interface Enqueuer {
  (action: Effect): void;
  assign(update: Pick<WorkflowMachineContext, 'steps' | 'outcome' | 'costUsd'>): void;
}

function run(enqueue: Enqueuer, change: ReturnType<typeof apply>): void {
  enqueue.assign(change.update);
  for (const effect of change.effects) enqueue(effect);
}

/** The context update and the effects of one change. */
function apply(
  context: WorkflowMachineContext,
  steps: WorkflowStepState[],
  outcome: WorkflowOutcome | null,
  costUsd: number,
): { update: Pick<WorkflowMachineContext, 'steps' | 'outcome' | 'costUsd'>; effects: Effect[] } {
  const plan = advance(context, steps, outcome ?? context.outcome, costUsd);
  const status = runStatusOf(plan.steps, plan.outcome);
  const final = plan.outcome !== null && status === plan.outcome.status;
  const effects: Effect[] = [{ type: 'persist', params: { status, outcome: plan.outcome, steps: plan.steps, costUsd: plan.costUsd, final } }];
  for (const launch of plan.launches) effects.push({ type: 'launch', params: launch });
  for (const cancel of plan.cancels) effects.push({ type: 'cancelStep', params: cancel });
  for (const stepId of plan.dispatchCancels) effects.push({ type: 'cancelDispatch', params: { stepId } });
  return { update: { steps: plan.steps, outcome: plan.outcome, costUsd: plan.costUsd }, effects };
}

export function workflowStateOf(snapshot: { matches(value: unknown): boolean; context: WorkflowMachineContext }): string {
  if (!snapshot.matches('active')) return snapshot.matches('done') ? 'done' : 'stopped';
  return runStatusOf(snapshot.context.steps, snapshot.context.outcome);
}
