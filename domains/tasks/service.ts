/**
 * The task runtime: one `task` actor per enabled task under the supervisor,
 * fires (schedule, webhook, lifecycle, manual, replay, sample) turned into
 * stored task runs, and those runs started as agent runs of kind `task`.
 *
 * Decisions (README "Tasks"):
 * - a fire beyond `max_concurrent_runs` waits as `pending` (FIFO, at most
 *   MAX_PENDING_FIRES per task); a fire at that bound is refused and recorded
 *   as a failed run with reason `queue_full`;
 * - schedule occurrences missed while the service was down are skipped (no
 *   catch-up burst); the last occurrence fired is persisted, so a restart
 *   never fires it a second time;
 * - pending fires survive a restart (they are stored) and start again in order;
 * - the daily cost cap is the sum of today's (UTC, on the runtime clock) cost
 *   of this task's runs; the agent run machine kills a run that crosses it.
 */
import type { Logger } from 'pino';
import { taskMachine, taskStateOf, type TaskMachineContext } from '../../actors/task.machine.js';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { Collections } from '../collections.js';
import { isoAt } from '../../runtime/clock.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { ServiceError } from '../../runtime/errors.js';
import type { ActivityRecorder } from '../activity/record.js';
import type { PlatformEvent, PlatformEvents } from '../../runtime/events.js';
import { newId } from '../../runtime/ids.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
import type { KindHandle, Supervisor } from '../../runtime/supervisor.js';
import type { FireResult, TaskFiring, TriggerInput } from './firing.js';
import { TaskRunLedger } from './run-ledger.js';
import { DEFAULT_TIMEZONE, nextOccurrence } from './schedule.js';
import { launchTaskRun, registerTaskRunResumer, resumeDispatchedTaskRun, type TaskLaunchDeps } from './task-launch.js';
import type { GatewayDispatch } from '../orchestrator/gateway-port.js';
import { renderInputTemplate } from './template.js';
import type { TaskDoc, TaskRunStatus } from './types.js';

const TASK_KIND = 'task';
/** pending fires kept per task beyond its running ones */
const MAX_PENDING_FIRES = 100;

export interface TaskServiceDeps {
  readonly config: ServiceConfig;
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  /** builds and starts the runs' agent runs, and cancels them (also during launch) */
  readonly launcher: AgentRunLauncher;
  readonly events: PlatformEvents;
  readonly logger: Logger;
  /** reports the runs that end before their agent run starts (the agent runtime reports the others) */
  readonly activity?: ActivityRecorder;
  /** runs of a task naming a gateway are dispatched through it */
  readonly gateways?: GatewayDispatch;
}

export type FireOutcome = { readonly run_id: string; readonly status: 'pending' | 'running' | 'refused' };

/** Extra facts of a fire, stored on its run. */
export interface FireOptions {
  readonly runId?: string;
  readonly deliveryId?: string | null;
  readonly replayOf?: string | null;
}

export class TaskService implements TaskFiring {
  private readonly collections: Collections;
  private readonly supervisor: Supervisor;
  private readonly logger: Logger;
  private readonly ledger: TaskRunLedger;
  private readonly actors: KindHandle<typeof taskMachine>;
  /** task id -> organization, for every live task actor */
  private readonly live = new Map<string, OrgId>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly deps: TaskServiceDeps) {
    this.collections = deps.collections;
    this.supervisor = deps.supervisor;
    this.logger = deps.logger;
    this.ledger = new TaskRunLedger(deps.collections, deps.supervisor.clock);
    const logic = taskMachine.provide({
      actions: {
        launch: ({ context }, { runId }) => this.background(this.launch(context.taskId, runId), context.taskId),
        refuse: ({ context }, { runId }) => this.background(this.refuse(context.taskId, runId), context.taskId),
        cancelPending: ({ context }, { runIds }) => this.background(this.cancelStored(context.taskId, runIds), context.taskId),
        scheduledFire: ({ context }, { occurrence }) => this.background(this.scheduledFire(context.taskId, occurrence), context.taskId),
      },
    });
    this.actors = this.supervisor.registerKind({
      kind: TASK_KIND,
      logic,
      policy: { onFailure: 'restart', maxRestarts: 3 },
      describe: taskStateOf,
      shutdownEvent: { type: 'SHUTDOWN' },
    });
    // a run parked on an approval ends later, possibly in another process: its end tells the task's actor when it is live
    registerTaskRunResumer(this.launchDeps(), (taskId, runId) => this.actors.send(taskId, { type: 'RUN_ENDED', runId }));
  }

  /** Starts the actors of enabled tasks, queues fires a previous process left pending, listens to platform events. */
  async start(): Promise<void> {
    const { kept, dispatched } = await this.ledger.settleInterrupted();
    const pending = await this.collections.taskRuns.findAcrossOrgs({ status: 'pending' }, 1_000_000);
    const pendingByTask = new Map<string, string[]>();
    for (const run of pending.sort((a, b) => (a.id < b.id ? -1 : 1))) {
      pendingByTask.set(run.task_id, [...(pendingByTask.get(run.task_id) ?? []), run.id]);
    }
    for (const task of await this.collections.tasks.findAcrossOrgs({ enabled: true }, 1_000_000)) {
      this.spawn(task.org_id, task, pendingByTask.get(task.id) ?? [], kept.get(task.id) ?? []);
      pendingByTask.delete(task.id);
    }
    // pending fires of tasks disabled or deleted meanwhile will never run
    for (const [taskId, runIds] of pendingByTask) {
      const [first] = pending.filter((run) => run.task_id === taskId);
      if (first) await this.finish(first.org_id, runIds, 'cancelled', 'task_disabled', 'the task was disabled before this fire ran');
    }
    // runs dispatched to a gateway when the previous process stopped: their dispatches are waited for again
    for (const run of dispatched) {
      const ended = () => void this.actors.send(run.task_id, { type: 'RUN_ENDED', runId: run.id });
      this.background(resumeDispatchedTaskRun(this.launchDeps(), run.org_id, run.task_id, run.id, ended), run.task_id);
    }
    this.unsubscribe = this.deps.events.subscribe((event) => this.onPlatformEvent(event));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Brings the task's actor in line with the stored task (after create, update, enable, disable). */
  taskChanged(org: OrgId, task: TaskDoc): void {
    const running = this.live.has(task.id) && this.supervisor.has(task.id);
    if (!task.enabled) {
      if (running) this.actors.send(task.id, { type: 'STOP' });
      this.live.delete(task.id);
      return;
    }
    if (running) {
      this.actors.send(task.id, {
        type: 'UPDATE',
        cron: task.trigger_kind === 'schedule' ? task.cron : null,
        timezone: task.timezone ?? DEFAULT_TIMEZONE,
        maxConcurrentRuns: task.max_concurrent_runs,
      });
    } else if (this.supervisor.accepting) this.spawn(org, task, []);
  }

  taskDeleted(taskId: string): void {
    if (this.live.has(taskId)) this.actors.send(taskId, { type: 'STOP' });
    this.live.delete(taskId);
  }

  /** TaskFiring: samples, replays and manual runs. A refused fire (pending bound) is a 429. */
  async fire(orgId: string, taskId: string, trigger: TriggerInput, options: FireOptions = {}): Promise<FireResult> {
    const org = asOrgId(orgId);
    const task = await this.collections.tasks.get(org, taskId);
    if (!task) throw new ServiceError('not_found', `task ${taskId} not found`);
    const outcome = await this.fireTask(org, task, trigger, options);
    if (outcome.status === 'refused') {
      throw new ServiceError(
        'rate_limited',
        `task ${task.id} already has ${MAX_PENDING_FIRES} pending fires; this one was recorded as failed (queue_full)`,
        { run_id: outcome.run_id, reason: 'queue_full' },
        { 'retry-after': '60' },
      );
    }
    return { run_id: outcome.run_id, status: outcome.status };
  }

  /** Stores the fire as a pending run and hands it to the task's actor. */
  async fireTask(org: OrgId, task: TaskDoc, trigger: TriggerInput, options: FireOptions = {}): Promise<FireOutcome> {
    if (!task.enabled || !this.live.has(task.id)) {
      if (!this.supervisor.accepting) throw new ServiceError('service_unavailable', 'the service is shutting down; retry shortly');
      throw new ServiceError('conflict', `task ${task.id} is disabled`, { task_id: task.id, enabled: task.enabled });
    }
    const input = this.resolveInput(task, trigger);
    const run = await this.collections.taskRuns.insert(org, {
      id: options.runId ?? newId('run'),
      task_id: task.id,
      status: 'pending',
      reason: null,
      error_message: null,
      origin: trigger.origin,
      delivery_id: options.deliveryId ?? trigger.delivery_id,
      replay_of: options.replayOf ?? null,
      input,
      cost_usd: 0,
      started_at: null,
      finished_at: null,
    });
    if (!this.actors.send(task.id, { type: 'FIRE', runId: run.id })) {
      await this.finish(org, [run.id], 'failed', 'shutdown', 'the service is shutting down');
      throw new ServiceError('service_unavailable', 'the service is shutting down; retry shortly');
    }
    const context = this.context(task.id);
    if (context?.running.includes(run.id)) return { run_id: run.id, status: 'running' };
    if (context?.pending.includes(run.id)) return { run_id: run.id, status: 'pending' };
    return { run_id: run.id, status: 'refused' };
  }

  /**
   * Cancels a run of the task: a pending fire leaves the queue, a running
   * run (or one being launched) gets its cancel flag. Throws not_found / conflict.
   */
  async cancel(org: OrgId, taskId: string, runId: string): Promise<TaskRunStatus> {
    const run = await this.collections.taskRuns.get(org, runId);
    if (!run || run.task_id !== taskId) throw new ServiceError('not_found', `run ${runId} not found`);
    const context = this.context(taskId);
    if (context?.pending.includes(runId)) {
      this.actors.send(taskId, { type: 'CANCEL_PENDING', runId });
      return 'cancelled';
    }
    if (run.status === 'pending' && !context?.running.includes(runId)) {
      await this.finish(org, [runId], 'cancelled', 'cancelled', 'cancelled before it started');
      return 'cancelled';
    }
    // on a gateway: the dispatch is cancelled and the run ends with it
    const gateways = this.deps.gateways;
    if (run.status === 'running' && gateways?.cancel && (await gateways.cancel(org, { workflow_run_id: runId, step_id: taskId }))) return 'running';
    // live, or its launch is in progress (the run then starts already cancelled)
    if ((run.status === 'pending' || run.status === 'running') && this.deps.launcher.cancel(org, runId)) return 'running';
    throw new ServiceError('conflict', 'the run is already finished', { status: run.status });
  }

  /**
   * Calls `listener` once the pending run has started (its agent run and feed
   * exist) or ended without starting; returns the unsubscribe function.
   */
  onStarted(runId: string, listener: () => void): () => void {
    return this.ledger.onStarted(runId, listener);
  }

  /** The live actor's state (scheduled, listening) and queue, for the task's read model. */
  actorView(taskId: string): { state: string; running: number; pending: number; next_fire_at: string | null } | null {
    const info = this.supervisor.info(taskId);
    const context = this.context(taskId);
    if (!info || !context) return null;
    return {
      state: info.state,
      running: context.running.length,
      pending: context.pending.length,
      next_fire_at: info.state === 'scheduled' && context.nextAt !== null ? isoAt(context.nextAt) : null,
    };
  }

  private context(taskId: string): TaskMachineContext | undefined {
    return this.actors.snapshot(taskId)?.context;
  }

  private spawn(org: OrgId, task: TaskDoc, pending: readonly string[], running: readonly string[] = []): void {
    this.live.set(task.id, org);
    this.actors.spawn({
      id: task.id,
      orgId: org,
      input: {
        taskId: task.id,
        cron: task.trigger_kind === 'schedule' ? task.cron : null,
        timezone: task.timezone ?? DEFAULT_TIMEZONE,
        maxConcurrentRuns: task.max_concurrent_runs,
        maxPending: MAX_PENDING_FIRES,
        lastFiredAt: task.last_fired_at === null ? null : Date.parse(task.last_fired_at),
        pending,
        running,
        now: () => this.supervisor.clock.now(),
        nextOccurrence,
      },
    });
    // an actor that ended for good (stopped, or failed past its restarts) takes no more fires, unless a new one replaced it
    void this.supervisor.whenFinished(task.id).then(() => {
      if (!this.supervisor.has(task.id)) this.live.delete(task.id);
    });
  }

  private resolveInput(task: TaskDoc, trigger: TriggerInput): Record<string, unknown> {
    if (task.input_template !== null) return renderInputTemplate(task.input_template, trigger);
    if (task.input !== null) return { ...task.input };
    return { instruction: '' };
  }

  private background(work: Promise<void>, taskId: string): void {
    work.catch((error: unknown) => this.logger.error({ err: error, task: taskId }, 'task side effect failed'));
  }

  private orgOf(taskId: string): OrgId {
    const org = this.live.get(taskId);
    if (org === undefined) throw new Error(`task ${taskId} is not live`);
    return org;
  }

  private async scheduledFire(taskId: string, occurrence: number): Promise<void> {
    const org = this.orgOf(taskId);
    // persisted before the run exists: a crash now loses this fire rather than doubling it
    const task = await this.collections.tasks.update(org, taskId, { last_fired_at: isoAt(occurrence) });
    if (!task) return;
    await this.fireTask(org, task, { origin: 'schedule', body: { scheduled_at: isoAt(occurrence) }, headers: {}, delivery_id: null });
  }

  private async refuse(taskId: string, runId: string): Promise<void> {
    await this.finish(this.orgOf(taskId), [runId], 'failed', 'queue_full', `the task already had ${MAX_PENDING_FIRES} pending fires`);
  }

  private async cancelStored(taskId: string, runIds: readonly string[]): Promise<void> {
    const org = this.live.get(taskId);
    if (org !== undefined) await this.finish(org, runIds, 'cancelled', 'cancelled', 'cancelled before it started');
  }

  private finish(org: OrgId, runIds: readonly string[], status: TaskRunStatus, reason: string, message: string): Promise<void> {
    return this.ledger.finish(org, runIds, status, reason, message);
  }

  /** async: a task that is no longer live rejects (logged) instead of throwing into the actor */
  private async launch(taskId: string, runId: string): Promise<void> {
    return launchTaskRun(this.launchDeps(), this.orgOf(taskId), taskId, runId, () => this.actors.send(taskId, { type: 'RUN_ENDED', runId }));
  }

  private launchDeps(): TaskLaunchDeps {
    const { collections, launcher, events, logger, activity, gateways } = this.deps;
    return { collections, launcher, events, logger, activity, gateways, ledger: this.ledger, clock: this.supervisor.clock };
  }

  private async onPlatformEvent(event: PlatformEvent): Promise<void> {
    const org = asOrgId(event.orgId);
    const tasks = await this.collections.tasks.findAll(org, { trigger_kind: 'lifecycle', enabled: true });
    for (const task of tasks) {
      if (!(task.events ?? []).includes(event.type)) continue;
      // a task never triggers itself through its own failures (an endless loop)
      if (event.type === 'task.run_failed' && event.data['task_id'] === task.id) continue;
      const outcome = await this.fireTask(org, task, {
        origin: 'lifecycle',
        body: { event: event.type, at: event.at, ...event.data },
        headers: {},
        delivery_id: null,
      }).catch((error: unknown) => {
        this.logger.warn({ err: error, task: task.id, event: event.type }, 'lifecycle fire failed');
        return null;
      });
      if (outcome?.status === 'refused') this.logger.warn({ task: task.id, run: outcome.run_id }, 'lifecycle fire refused: pending queue full');
    }
  }
}
