/**
 * A task run's launch: the stored fire becomes an agent run of kind `task`
 * through `startAgentRun`, with the task's agent, prompt, sources, realm and
 * daily cost cap. A launch that cannot start ends the task run as failed.
 */
import type { Logger } from 'pino';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { Collections } from '../collections.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import type { PlatformEvents } from '../../runtime/events.js';
import { DEFAULT_AGENT } from '../organizations.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { TaskRunLedger } from './run-ledger.js';
import { reportTaskRunEnded, type ActivityRecorder } from '../activity/runs.js';
import type { TaskRunStatus } from './types.js';
import type { GatewayDispatch } from '../orchestrator/gateway-port.js';
import type { RunResumer } from '../../runtime/agent/parking.js';
import type { RunEnd } from '../../actors/agent-run.types.js';

export interface TaskLaunchDeps {
  readonly collections: Collections;
  readonly launcher: AgentRunLauncher;
  readonly ledger: TaskRunLedger;
  readonly events: PlatformEvents;
  readonly logger: Logger;
  readonly clock: Pick<RuntimeClock, 'now'>;
  /** reports the runs that end before their agent run starts (the agent runtime reports the others) */
  readonly activity?: ActivityRecorder | undefined;
  /** a task naming a gateway dispatches its runs there (domains/gateways/dispatch.ts) */
  readonly gateways?: GatewayDispatch | undefined;
}

/** the resumer of parked task runs (runtime/agent/parking.ts) */
const TASK_SITE = 'task';

/** The user message of a run: its instruction, then the rest of its input as JSON. */
function userContentOf(input: Record<string, unknown>): string {
  const { instruction, ...rest } = input;
  const text = typeof instruction === 'string' ? instruction : JSON.stringify(instruction ?? '');
  return Object.keys(rest).length === 0 ? text : `${text}\n\nInput:\n${JSON.stringify(rest, null, 2)}`;
}

/**
 * Launches the pending run `runId` of the task. `runEnded` tells the task's
 * actor the run is over (whether it ran or not). Call it synchronously from
 * the actor's `launch` action, so a cancel from then on reaches the launch.
 */
export async function launchTaskRun(deps: TaskLaunchDeps, org: OrgId, taskId: string, runId: string, runEnded: () => void): Promise<void> {
  const { collections, launcher, ledger } = deps;
  launcher.begin(org, runId);
  const fail = failer(deps, org, taskId, runId, runEnded);
  try {
    const [run, task] = await Promise.all([collections.taskRuns.get(org, runId), collections.tasks.get(org, taskId)]);
    if (!run || run.status !== 'pending') return runEnded();
    if (!task) return await fail('task_deleted', 'the task was deleted');
    if (task.gateway != null && deps.gateways) {
      // an external engine runs it: the run's status follows the dispatch
      await collections.taskRuns.update(org, runId, { status: 'running', started_at: isoAt(deps.clock.now()) });
      ledger.started(runId);
      return await dispatchTaskRun(deps, deps.gateways, org, { id: taskId, gateway: task.gateway }, run, fail, runEnded);
    }
    const agentRef = task.agent ?? DEFAULT_AGENT;
    const agent = (await collections.agents.get(org, agentRef)) ?? (await collections.agents.findOne(org, { name: agentRef }));
    let prepared: Awaited<ReturnType<AgentRunLauncher['prepare']>>;
    try {
      prepared = await launcher.prepare({ org, site: 'task', agent: agent ?? null, sitePrompt: task.system_prompt });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'llm_unconfigured') return await fail('llm_unconfigured', error.message);
      throw error;
    }
    const userContent = userContentOf(run.input);
    await launcher.start(prepared, {
      runId,
      userId: task.created_by,
      kind: 'task',
      question: userContent,
      userMessage: userContent === '' ? '(no instruction)' : userContent,
      approvalWrite: task.approval_write,
      sourceIds: task.enabled_source_ids,
      costCap: { scope: 'task', taskId, capUsd: task.cost_cap_usd_per_day },
      realm: task.realm,
      record: { input: run.input, taskId },
      onStarting: async (at) => {
        await collections.taskRuns.update(org, runId, { status: 'running', started_at: isoAt(at) });
      },
      onEnd: taskRunEnd(deps, org, taskId, runId, runEnded),
      resume: { site: TASK_SITE, data: { task_id: taskId } },
    });
    ledger.started(runId);
  } catch (error) {
    deps.logger.error({ err: error, task: taskId, run: runId }, 'task run could not start');
    await fail('internal_error', error instanceof Error ? error.message : String(error));
  } finally {
    launcher.abandon(runId);
  }
}

/** What a task run's end writes: the run's status, cost and end, the task actor told, a failure announced. */
function taskRunEnd(deps: TaskLaunchDeps, org: OrgId, taskId: string, runId: string, runEnded: () => void): (end: RunEnd) => Promise<void> {
  return async (end) => {
    await deps.collections.taskRuns.update(org, runId, {
      status: end.status,
      reason: end.reason,
      error_message: end.message,
      cost_usd: end.costUsd,
      finished_at: isoAt(deps.clock.now()),
    });
    runEnded();
    if (end.status === 'failed') deps.events.emit('task.run_failed', org, { task_id: taskId, run_id: runId, reason: end.reason, message: end.message });
  };
}

/**
 * Rebuilds a parked task run with its task as it is now (agent, prompt,
 * sources); a task deleted meanwhile leaves the default agent and no source.
 * `runEnded` tells the task's actor (when it is live) that the run is over.
 */
export function registerTaskRunResumer(deps: TaskLaunchDeps, runEnded: (taskId: string, runId: string) => void): void {
  const resumer: RunResumer = async (org, run, data) => {
    const taskId = typeof data['task_id'] === 'string' ? data['task_id'] : (run.task_id ?? '');
    const task = await deps.collections.tasks.get(org, taskId);
    const agentRef = task?.agent ?? DEFAULT_AGENT;
    const agent = (await deps.collections.agents.get(org, agentRef)) ?? (await deps.collections.agents.findOne(org, { name: agentRef }));
    const surroundings = await deps.launcher.surroundings(
      { org, site: 'task', agent: agent ?? null, sitePrompt: task?.system_prompt ?? null },
      task ? task.enabled_source_ids : [],
    );
    return { ...surroundings, onEnd: taskRunEnd(deps, org, taskId, run.id, () => runEnded(taskId, run.id)) };
  };
  deps.launcher.registerResumer(TASK_SITE, resumer);
}

type Fail = (reason: string, message: string, status?: TaskRunStatus) => Promise<void>;

/** Ends a run that did not (or could not) finish on its own: stored, the actor told, reported, a failure announced. */
function failer(deps: TaskLaunchDeps, org: OrgId, taskId: string, runId: string, runEnded: () => void): Fail {
  return async (reason, message, status = 'failed') => {
    await deps.ledger.finish(org, [runId], status, reason, message);
    runEnded();
    if (deps.activity) await reportTaskRunEnded(deps.activity, deps.collections.tasks, org, { taskId, runId }, { status, reason, message });
    if (status === 'failed') deps.events.emit('task.run_failed', org, { task_id: taskId, run_id: runId, reason, message });
  };
}

/** The run goes to the task's gateway (the run id and task id are the dispatch's idempotency key); its status follows the dispatch. */
async function dispatchTaskRun(
  deps: TaskLaunchDeps,
  gateways: GatewayDispatch,
  org: OrgId,
  task: { readonly id: string; readonly gateway: string | null },
  run: { readonly id: string; readonly input: Record<string, unknown> },
  fail: Fail,
  runEnded: () => void,
): Promise<void> {
  let outcome: Awaited<ReturnType<GatewayDispatch['dispatch']>>;
  try {
    outcome = await gateways.dispatch(org, task.gateway === 'default' ? null : task.gateway, { workflow_run_id: run.id, step_id: task.id, input: run.input });
  } catch (error) {
    if (error instanceof ServiceError) return await fail(error.code, error.message);
    throw error;
  }
  if (outcome.status === 'cancelled') return await fail('cancelled', 'the run was cancelled', 'cancelled');
  if (outcome.status === 'failed') return await fail('gateway_failed', outcome.error ?? 'the gateway reported a failure');
  await deps.collections.taskRuns.update(org, run.id, { status: 'succeeded', reason: null, error_message: null, finished_at: isoAt(deps.clock.now()) });
  runEnded();
}

/**
 * A run a previous process dispatched to a gateway and left running: the
 * dispatch is resumed (runtime restart: Temporal polled again, a webhook
 * callback still completes it) and the run ends with it.
 */
export async function resumeDispatchedTaskRun(deps: TaskLaunchDeps, org: OrgId, taskId: string, runId: string, runEnded: () => void): Promise<void> {
  const fail = failer(deps, org, taskId, runId, runEnded);
  try {
    const [run, task] = await Promise.all([deps.collections.taskRuns.get(org, runId), deps.collections.tasks.get(org, taskId)]);
    if (!run || run.status !== 'running') return runEnded();
    if (!deps.gateways) return await fail('gateway_unavailable', 'no orchestration engine gateway is configured on this server');
    await dispatchTaskRun(deps, deps.gateways, org, { id: taskId, gateway: task?.gateway ?? null }, run, fail, runEnded);
  } catch (error) {
    deps.logger.error({ err: error, task: taskId, run: runId }, 'a dispatched task run could not be resumed');
    await fail('internal_error', error instanceof Error ? error.message : String(error));
  }
}
