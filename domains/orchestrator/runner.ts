/**
 * The runtime side of workflow runs: one `workflow_run` actor per live run
 * under the supervisor, and the effects its machine names.
 *
 * - agent steps start through THE launcher (`startAgentRun`): an agent run of
 *   kind `workflow_step` with the step's agent, its rendered instruction as the user
 *   message, and a cap of its own (`cost_cap_usd`, lowered to what is left of
 *   the workflow's cap);
 * - gateway steps go through the optional `GatewayDispatch` port (none wired:
 *   the step fails with `gateway_unavailable`);
 * - every change of the run is written, in order, to its stored document.
 *
 * Restart (README "Orchestrator"): runs stored as running or waiting for an
 * approval are resumed. A step that was running takes its agent run's result
 * when that run finished; a run the stop interrupted (failed/`interrupted`
 * or `shutdown`) is started again as a new agent run, at most
 * MAX_STEP_ATTEMPTS times in all, then the step fails with `interrupted`. A
 * gateway step that was in flight is dispatched again (same run and step
 * ids: the engine's idempotency key).
 *
 * A step's agent run idle in an approval wait is parked like a task run
 * (runtime/agent/parking.ts, resumer `workflow_step`): the step stays
 * running, also across a restart, and the run's end (once the approval is
 * answered, or its deadline passes) reaches the workflow as any step's end.
 */
import type { Logger } from 'pino';
import { workflowMachine, workflowStateOf, type LaunchParams, type PersistParams, type WorkflowOutcome } from '../../actors/workflow.machine.js';
import type { RunEnd } from '../../actors/agent-run.types.js';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { Collections } from '../collections.js';
import { isoAt } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { KindHandle, Supervisor } from '../../runtime/supervisor.js';
import { renderWithContext } from '../tasks/template.js';
import { conditionHolds, parsedOutput } from './conditions.js';
import type { StepDef, StepState, WorkflowRunDoc } from './documents.js';
import type { GatewayDispatch } from './gateway-port.js';
import { DEFAULT_AGENT } from '../organizations.js';
import type { RunResumer } from '../../runtime/agent/parking.js';

const WORKFLOW_RUN_KIND = 'workflow_run';
/** the resumer of parked step runs (runtime/agent/parking.ts) */
const STEP_SITE = 'workflow_step';
const MAX_STEP_ATTEMPTS = 3;
/** an agent's reply kept as a step's output, in characters */
const MAX_OUTPUT_CHARS = 100_000;

export interface WorkflowRunnerDeps {
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  readonly launcher: AgentRunLauncher;
  readonly logger: Logger;
  readonly gateways?: GatewayDispatch | null;
}

interface LiveRun {
  readonly org: OrgId;
  readonly doc: WorkflowRunDoc;
  writes: Promise<void>;
}

const INTERRUPTED = new Set(['interrupted', 'shutdown']);
const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export class WorkflowRunner {
  private readonly actors: KindHandle<typeof workflowMachine>;
  private readonly live = new Map<string, LiveRun>();
  private gateways: GatewayDispatch | null;
  /**
   * Until `start` has spawned the stored runs: step ends of parked agent runs
   * that came back (a deadline passed) before their workflow run was live,
   * delivered once it is.
   */
  private early: Map<string, StepEnded[]> | null = new Map();

  constructor(private readonly deps: WorkflowRunnerDeps) {
    this.gateways = deps.gateways ?? null;
    deps.launcher.registerResumer(STEP_SITE, this.resumer);
    const logic = workflowMachine.provide({
      actions: {
        launch: ({ context }, params) => this.background(this.launch(context.runId, params), context.runId),
        cancelStep: ({ context }, { agentRunId }) => {
          const run = this.live.get(context.runId);
          if (run) deps.launcher.cancel(run.org, agentRunId);
        },
        cancelDispatch: ({ context }, { stepId }) => {
          const run = this.live.get(context.runId);
          const cancel = this.gateways?.cancel?.bind(this.gateways);
          if (run && cancel)
            this.background(
              cancel(run.org, { workflow_run_id: context.runId, step_id: stepId }).then(() => undefined),
              context.runId,
            );
        },
        persist: ({ context }, params) => this.persist(context.runId, params),
      },
    });
    this.actors = deps.supervisor.registerKind({
      kind: WORKFLOW_RUN_KIND,
      logic,
      // a restart from the input would start its steps a second time
      policy: { onFailure: 'fail' },
      describe: workflowStateOf,
      shutdownEvent: { type: 'SHUTDOWN' },
      onFailed: async (info, error) => {
        const run = this.live.get(info.id);
        if (!run) return;
        await run.writes;
        const message = error instanceof Error ? error.message : String(error);
        await deps.collections.workflowRuns.update(run.org, info.id, {
          status: 'failed',
          reason: 'internal_error',
          error_message: message,
          finished_at: isoAt(deps.supervisor.clock.now()),
        });
        this.live.delete(info.id);
      },
      drain: async () => {
        await Promise.all([...this.live.values()].map((run) => run.writes));
      },
    });
  }

  /** The external orchestration engine's port (wired by its module; optional). */
  useGatewayDispatch(dispatch: GatewayDispatch | null): void {
    this.gateways = dispatch;
  }

  /** Resumes the runs a previous process left running or waiting (README "Orchestrator"). */
  async start(): Promise<void> {
    const { workflowRuns } = this.deps.collections;
    const stored = [
      ...(await workflowRuns.findAcrossOrgs({ status: 'running' }, 1_000_000)),
      ...(await workflowRuns.findAcrossOrgs({ status: 'waiting_approval' }, 1_000_000)),
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const run of stored) {
      try {
        const steps = await Promise.all(run.steps.map((step) => this.settle(run.org_id, step)));
        const costUsd = steps.reduce((sum, step) => sum + step.cost_usd, 0);
        const doc = (await workflowRuns.update(run.org_id, run.id, { steps, cost_usd: costUsd })) ?? run;
        this.spawn(run.org_id, doc);
      } catch (error) {
        this.deps.logger.error({ err: error, workflow_run: run.id }, 'workflow run could not be resumed');
      }
    }
    this.early = null;
  }

  /** Starts the actor of a stored run (new or resumed). */
  spawn(org: OrgId, doc: WorkflowRunDoc): void {
    const clock = this.deps.supervisor.clock;
    const byId = new Map(doc.definition.steps.map((step) => [step.id, step]));
    this.live.set(doc.id, { org, doc, writes: Promise.resolve() });
    this.actors.spawn({
      id: doc.id,
      orgId: org,
      input: {
        runId: doc.id,
        specs: doc.definition.steps.map((step) => ({ id: step.id, kind: step.kind, needs: step.needs, hasCondition: step.when !== undefined })),
        steps: doc.steps,
        costCapUsd: doc.definition.cost_cap_usd,
        costUsd: doc.cost_usd,
        outcome: resumedOutcome(doc),
        nowIso: () => isoAt(clock.now()),
        newRunId: () => newId('run'),
        conditionHolds: (stepId, steps) => {
          const when = byId.get(stepId)?.when;
          const source = steps.find((step) => step.id === when?.step);
          return when !== undefined && source?.status === 'succeeded' && conditionHolds(when, source.output);
        },
      },
    });
    for (const event of this.early?.get(doc.id) ?? []) this.actors.send(doc.id, event);
    this.early?.delete(doc.id);
    void this.deps.supervisor.whenFinished(doc.id).then(async () => {
      await this.live.get(doc.id)?.writes;
      if (!this.deps.supervisor.has(doc.id)) this.live.delete(doc.id);
    });
  }

  /** Sends an event to a live run; false when it is not live. */
  send(runId: string, event: Parameters<KindHandle<typeof workflowMachine>['send']>[1]): boolean {
    return this.actors.send(runId, event);
  }

  /** Resolves once every change handed to the store so far is written. */
  async flush(runId: string): Promise<void> {
    await this.live.get(runId)?.writes;
  }

  private persist(runId: string, params: PersistParams): void {
    const run = this.live.get(runId);
    if (!run) return;
    const { collections, supervisor, logger } = this.deps;
    const patch = {
      status: params.status,
      reason: params.outcome?.reason ?? null,
      error_message: params.outcome?.message ?? null,
      steps: params.steps,
      cost_usd: params.costUsd,
      ...(params.final ? { finished_at: isoAt(supervisor.clock.now()) } : {}),
    };
    run.writes = run.writes
      .then(async () => {
        await collections.workflowRuns.update(run.org, runId, patch);
      })
      .catch((error: unknown) => logger.error({ err: error, workflow_run: runId }, 'workflow run state could not be stored'));
  }

  private background(work: Promise<void>, runId: string): void {
    work.catch((error: unknown) => this.deps.logger.error({ err: error, workflow_run: runId }, 'workflow side effect failed'));
  }

  private ended(runId: string, stepId: string, agentRunId: string | null, result: StepResult): void {
    const event: StepEnded = { type: 'STEP_ENDED', stepId, agentRunId, ...result };
    if (this.actors.send(runId, event) || !this.early) return;
    this.early.set(runId, [...(this.early.get(runId) ?? []), event]);
  }

  /** Rebuilds a parked step run with the step's agent as it is now; its end is the step's end. */
  private readonly resumer: RunResumer = async (org, run, data) => {
    const { collections, launcher } = this.deps;
    const str = (key: string): string => (typeof data[key] === 'string' ? data[key] : '');
    const [runId, stepId] = [str('workflow_run_id'), str('step_id')];
    const doc = await collections.workflowRuns.get(org, runId);
    const step = doc?.definition.steps.find((candidate) => candidate.id === stepId);
    const agentRef = step?.kind === 'agent' ? step.agent : DEFAULT_AGENT;
    const agent = (await collections.agents.get(org, agentRef)) ?? (await collections.agents.findOne(org, { name: agentRef }));
    const surroundings = await launcher.surroundings({ org, site: 'task', agent: agent ?? null }, null);
    return { ...surroundings, onEnd: async (end, text) => this.agentEnded(runId, stepId, run.id, end, text) };
  };

  private async launch(runId: string, params: LaunchParams): Promise<void> {
    const run = this.live.get(runId);
    const step = run?.doc.definition.steps.find((candidate) => candidate.id === params.stepId);
    if (!run || !step) return;
    const context = {
      inputs: run.doc.inputs,
      steps: Object.fromEntries(params.steps.map((state) => [state.id, { status: state.status, output: state.output }])),
    };
    if (step.kind === 'gateway') return this.dispatch(run, runId, step, params, context);
    if (step.kind !== 'agent' || params.agentRunId === null) return;
    const agentRunId = params.agentRunId;
    const { collections, launcher } = this.deps;
    const fail = (reason: string, error: string): void => this.ended(runId, step.id, agentRunId, failure(reason, error));
    launcher.begin(run.org, agentRunId);
    try {
      const agent = (await collections.agents.get(run.org, step.agent)) ?? (await collections.agents.findOne(run.org, { name: step.agent }));
      if (!agent) return fail('agent_not_found', `agent ${step.agent} not found`);
      let prepared: Awaited<ReturnType<AgentRunLauncher['prepare']>>;
      try {
        prepared = await launcher.prepare({ org: run.org, site: 'task', agent });
      } catch (error) {
        if (error instanceof ServiceError && error.code === 'llm_unconfigured') return fail('llm_unconfigured', error.message);
        throw error;
      }
      const instruction = renderWithContext(step.instruction, context);
      const caps = [step.cost_cap_usd ?? null, params.remainingUsd].filter((cap): cap is number => cap !== null);
      await launcher.start(prepared, {
        runId: agentRunId,
        userId: run.doc.created_by,
        kind: 'workflow_step',
        question: instruction,
        userMessage: instruction === '' ? '(no instruction)' : instruction,
        approvalWrite: 'ask',
        sourceIds: null,
        costCap: { scope: 'run', capUsd: caps.length === 0 ? null : Math.min(...caps) },
        record: { input: { instruction, workflow_run_id: runId, step_id: step.id } },
        onEnd: async (end, text) => this.agentEnded(runId, step.id, agentRunId, end, text),
        resume: { site: STEP_SITE, data: { workflow_run_id: runId, step_id: step.id } },
      });
    } catch (error) {
      this.deps.logger.error({ err: error, workflow_run: runId, step: step.id }, 'workflow step could not start');
      fail('internal_error', error instanceof Error ? error.message : String(error));
    } finally {
      launcher.abandon(agentRunId);
    }
  }

  private agentEnded(runId: string, stepId: string, agentRunId: string, end: RunEnd, text: string): void {
    // a run the shutdown stopped: the stored step stays running and the next process resumes it
    if (!this.deps.supervisor.accepting && end.reason !== null && INTERRUPTED.has(end.reason)) return;
    this.ended(runId, stepId, agentRunId, {
      status: end.status,
      output: end.status === 'succeeded' ? outputOf(text) : null,
      costUsd: end.costUsd,
      reason: end.reason,
      error: end.message,
    });
  }

  private async dispatch(
    run: LiveRun,
    runId: string,
    step: StepDef & { kind: 'gateway' },
    params: LaunchParams,
    context: Record<string, unknown>,
  ): Promise<void> {
    const gateways = this.gateways;
    if (!gateways) return this.ended(runId, step.id, null, failure('gateway_unavailable', 'no orchestration engine gateway is configured on this server'));
    try {
      const input = renderValues(step.input, context);
      const result = await gateways.dispatch(run.org, step.gateway, { workflow_run_id: runId, step_id: params.stepId, input });
      this.ended(runId, step.id, null, {
        status: result.status,
        output: result.output,
        costUsd: 0,
        reason: result.status === 'failed' ? 'gateway_failed' : result.status === 'cancelled' ? 'cancelled' : null,
        error: result.status === 'failed' ? (result.error ?? 'the gateway reported a failure') : null,
      });
    } catch (error) {
      const code = error instanceof ServiceError ? error.code : 'gateway_failed';
      this.ended(runId, step.id, null, failure(code, error instanceof Error ? error.message : String(error)));
    }
  }

  /** A step a previous process left running: its agent run's result, or pending again (see the module comment). */
  private async settle(org: OrgId, step: StepState): Promise<StepState> {
    if (step.status !== 'running') return step;
    const at = isoAt(this.deps.supervisor.clock.now());
    if (step.agent_run_id === null) return { ...step, status: 'pending' };
    const { agentRuns, agentRunEvents } = this.deps.collections;
    const agentRun = await agentRuns.get(org, step.agent_run_id);
    // parked on an approval: it waits again (runtime/agent/parking.ts) and ends the step when it comes back
    if (agentRun?.status === 'awaiting_approval' && agentRun.parked_at != null) return step;
    const cost = step.cost_usd + (agentRun?.cost_usd ?? 0);
    if (agentRun && FINISHED.has(agentRun.status) && !(agentRun.reason !== null && INTERRUPTED.has(agentRun.reason))) {
      let output: unknown = null;
      if (agentRun.status === 'succeeded') {
        const messages = await agentRunEvents.findAll(org, { run_id: agentRun.id, type: 'message' });
        const last = messages.filter((event) => event.data['role'] === 'assistant').sort((a, b) => b.seq - a.seq)[0];
        output = outputOf(typeof last?.data['content'] === 'string' ? last.data['content'] : '');
      }
      const status = agentRun.status as 'succeeded' | 'failed' | 'cancelled';
      return { ...step, status, output, cost_usd: cost, reason: agentRun.reason, error: agentRun.error_message, finished_at: agentRun.finished_at ?? at };
    }
    if (step.attempts >= MAX_STEP_ATTEMPTS) {
      return { ...step, status: 'failed', cost_usd: cost, reason: 'interrupted', error: `interrupted by a restart ${step.attempts} times`, finished_at: at };
    }
    return { ...step, status: 'pending', cost_usd: cost };
  }
}

type StepEnded = Extract<Parameters<KindHandle<typeof workflowMachine>['send']>[1], { type: 'STEP_ENDED' }>;
type StepResult = Omit<StepEnded, 'type' | 'stepId' | 'agentRunId'>;

const failure = (reason: string, error: string): StepResult => ({ status: 'failed', output: null, costUsd: 0, reason, error });

/** An agent's reply as a step output: parsed JSON when it is JSON, else the text (bounded). */
function outputOf(text: string): unknown {
  const parsed = parsedOutput(text);
  return typeof parsed === 'string' && parsed.length > MAX_OUTPUT_CHARS ? parsed.slice(0, MAX_OUTPUT_CHARS) : parsed;
}

function renderValues(input: Record<string, unknown>, context: Record<string, unknown>): Record<string, unknown> {
  const render = (value: unknown): unknown => {
    if (typeof value === 'string') return renderWithContext(value, context);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return renderValues(value as Record<string, unknown>, context);
    return value;
  };
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [key, render(value)]));
}

/** What a resumed run was already heading for: a cancel, or a failed step. */
function resumedOutcome(doc: WorkflowRunDoc): WorkflowOutcome | null {
  if (doc.reason === 'cancelled') return { status: 'cancelled', reason: 'cancelled', message: doc.error_message };
  if (doc.reason !== null) return { status: 'failed', reason: doc.reason, message: doc.error_message };
  const failed = doc.steps.find((step) => step.status === 'failed' || step.status === 'cancelled');
  if (!failed) return null;
  return {
    status: 'failed',
    reason: 'step_failed',
    message: `step ${failed.id} ${failed.status}: ${failed.reason ?? failed.status}${failed.error ? `: ${failed.error}` : ''}`,
  };
}
