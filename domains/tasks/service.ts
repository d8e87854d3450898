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
import type { NetPort } from '../../connectors/contract.js';
import { taskMachine, taskStateOf, type TaskMachineContext, type TaskMachineEvent } from '../../actors/task.machine.js';
import { agentRunOptions, recalledMemory } from '../agents/agent-options.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { Collections } from '../collections.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { ServiceError } from '../../runtime/errors.js';
import type { PlatformEvent, PlatformEvents } from '../../runtime/events.js';
import { newId } from '../../runtime/ids.js';
import { resolveLlmProvider } from '../../runtime/llm/index.js';
import { LlmError, type ChatMessage } from '../../runtime/llm/types.js';
import { reportTaskRunEnded, type ActivityRecorder } from '../activity/runs.js';
import { DEFAULT_AGENT, SETTINGS_DEFAULTS } from '../organizations.js';
import type { SourceDirectory } from '../sources/directory.js';
import { asOrgId, type OrgId } from '../../runtime/store/types.js';
import type { Supervisor } from '../../runtime/supervisor.js';
import type { FireResult, TaskFiring, TriggerInput } from './firing.js';
import { nextOccurrence } from './schedule.js';
import { renderInputTemplate } from './template.js';
import type { TaskDoc, TaskRunStatus } from './types.js';

export const TASK_KIND = 'task';
/** pending fires kept per task beyond its running ones */
export const MAX_PENDING_FIRES = 100;
const TASK_SYSTEM_PROMPT = [
  'You carry out a task for the organization, started by a trigger (a schedule, a webhook or a platform event); nobody reads along live.',
  'You work with its connected systems through two tools: search_connector_tools finds the tools available to you,',
  'execute_connector_tool runs one by name. Write tools may need a person\'s approval; when one is denied or times out, do not retry it.',
  'Finish with a short account of what you did.',
].join(' ');

export interface TaskServiceDeps {
  readonly config: ServiceConfig;
  readonly collections: Collections;
  readonly supervisor: Supervisor;
  readonly agentRuntime: AgentRuntime;
  readonly sources: SourceDirectory;
  readonly events: PlatformEvents;
  readonly logger: Logger;
  /** the egress guard: an organization's llm_base_url is reached through it */
  readonly egress: NetPort;
  /** reports the runs that end before their agent run starts (the agent runtime reports the others) */
  readonly activity?: ActivityRecorder;
}

export type FireOutcome = { readonly run_id: string; readonly status: 'pending' | 'running' | 'refused' };

/** Extra facts of a fire, stored on its run. */
export interface FireOptions {
  readonly runId?: string;
  readonly deliveryId?: string | null;
  readonly replayOf?: string | null;
}

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export class TaskService implements TaskFiring {
  private readonly collections: Collections;
  private readonly supervisor: Supervisor;
  private readonly logger: Logger;
  /** task id -> organization, for every live task actor */
  private readonly live = new Map<string, OrgId>();
  /** runs asked to cancel while their launch was in progress */
  private readonly cancelRequested = new Set<string>();
  private unsubscribe: (() => void) | null = null;
  /** listeners of pending runs (an SSE client waiting for the run to start or end) */
  private readonly startWaiters = new Map<string, (() => void)[]>();

  constructor(private readonly deps: TaskServiceDeps) {
    this.collections = deps.collections;
    this.supervisor = deps.supervisor;
    this.logger = deps.logger;
    const logic = taskMachine.provide({
      actions: {
        launch: ({ context }, { runId }) => this.background(this.launch(context.taskId, runId), context.taskId),
        refuse: ({ context }, { runId }) => this.background(this.refuse(context.taskId, runId), context.taskId),
        cancelPending: ({ context }, { runIds }) => this.background(this.cancelStored(context.taskId, runIds), context.taskId),
        scheduledFire: ({ context }, { occurrence }) => this.background(this.scheduledFire(context.taskId, occurrence), context.taskId),
      },
    });
    this.supervisor.registerKind({
      kind: TASK_KIND,
      logic,
      policy: { onFailure: 'restart', maxRestarts: 3 },
      describe: taskStateOf,
      shutdownEvent: { type: 'SHUTDOWN' },
    });
  }

  /** Starts the actors of enabled tasks, queues fires a previous process left pending, listens to platform events. */
  async start(): Promise<void> {
    await this.settleInterrupted();
    const pending = await this.collections.taskRuns.findAcrossOrgs({ status: 'pending' }, 1_000_000);
    const pendingByTask = new Map<string, string[]>();
    for (const run of pending.sort((a, b) => (a.id < b.id ? -1 : 1))) {
      pendingByTask.set(run.task_id, [...(pendingByTask.get(run.task_id) ?? []), run.id]);
    }
    for (const task of await this.collections.tasks.findAcrossOrgs({ enabled: true }, 1_000_000)) {
      this.spawn(task.org_id, task, pendingByTask.get(task.id) ?? []);
      pendingByTask.delete(task.id);
    }
    // pending fires of tasks disabled or deleted meanwhile will never run
    for (const [taskId, runIds] of pendingByTask) {
      const [first] = pending.filter((run) => run.task_id === taskId);
      if (first) await this.finish(first.org_id, runIds, 'cancelled', 'task_disabled', 'the task was disabled before this fire ran');
    }
    this.unsubscribe = this.deps.events.subscribe((event) => this.onPlatformEvent(event));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Brings the task's actor in line with the stored task (after create, update, enable, disable). */
  taskChanged(org: OrgId, task: TaskDoc): void {
    const running = this.live.has(task.id) && this.supervisor.get(task.id) !== undefined;
    if (!task.enabled) {
      if (running) this.supervisor.send<TaskMachineEvent>(task.id, { type: 'STOP' });
      this.live.delete(task.id);
      return;
    }
    if (running) {
      this.supervisor.send<TaskMachineEvent>(task.id, {
        type: 'UPDATE',
        cron: task.trigger_kind === 'schedule' ? task.cron : null,
        maxConcurrentRuns: task.max_concurrent_runs,
      });
    } else if (this.supervisor.accepting) this.spawn(org, task, []);
  }

  taskDeleted(taskId: string): void {
    if (this.live.has(taskId)) this.supervisor.send<TaskMachineEvent>(taskId, { type: 'STOP' });
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
    if (!this.supervisor.send<TaskMachineEvent>(task.id, { type: 'FIRE', runId: run.id })) {
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
   * run gets its cancel flag. Throws not_found / conflict.
   */
  async cancel(org: OrgId, taskId: string, runId: string): Promise<TaskRunStatus> {
    const run = await this.collections.taskRuns.get(org, runId);
    if (!run || run.task_id !== taskId) throw new ServiceError('not_found', `run ${runId} not found`);
    const context = this.context(taskId);
    if (context?.pending.includes(runId)) {
      this.supervisor.send<TaskMachineEvent>(taskId, { type: 'CANCEL_PENDING', runId });
      return 'cancelled';
    }
    if (run.status === 'pending' && !context?.running.includes(runId)) {
      await this.finish(org, [runId], 'cancelled', 'cancelled', 'cancelled before it started');
      return 'cancelled';
    }
    if (run.status === 'pending' || run.status === 'running') {
      if (this.deps.agentRuntime.cancel(org, runId)) return 'running';
      // its launch is in progress: the launch sees the flag before starting the agent run
      this.cancelRequested.add(runId);
      return 'cancelled';
    }
    throw new ServiceError('conflict', 'the run is already finished', { status: run.status });
  }

  /**
   * Calls `listener` once the pending run has started (its agent run and feed
   * exist) or ended without starting; returns the unsubscribe function.
   */
  onStarted(runId: string, listener: () => void): () => void {
    const listeners = this.startWaiters.get(runId) ?? [];
    listeners.push(listener);
    this.startWaiters.set(runId, listeners);
    return () => {
      const remaining = (this.startWaiters.get(runId) ?? []).filter((entry) => entry !== listener);
      if (remaining.length === 0) this.startWaiters.delete(runId);
      else this.startWaiters.set(runId, remaining);
    };
  }

  private started(runId: string): void {
    const listeners = this.startWaiters.get(runId);
    this.startWaiters.delete(runId);
    for (const listener of listeners ?? []) listener();
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
      next_fire_at: info.state === 'scheduled' && context.nextAt !== null ? new Date(context.nextAt).toISOString() : null,
    };
  }

  private context(taskId: string): TaskMachineContext | undefined {
    const actor = this.supervisor.get(taskId);
    return actor ? (actor.getSnapshot() as { context: TaskMachineContext }).context : undefined;
  }

  private spawn(org: OrgId, task: TaskDoc, pending: readonly string[]): void {
    this.live.set(task.id, org);
    this.supervisor.spawn(TASK_KIND, {
      id: task.id,
      orgId: org,
      input: {
        taskId: task.id,
        cron: task.trigger_kind === 'schedule' ? task.cron : null,
        maxConcurrentRuns: task.max_concurrent_runs,
        maxPending: MAX_PENDING_FIRES,
        lastFiredAt: task.last_fired_at === null ? null : Date.parse(task.last_fired_at),
        pending,
        now: () => this.supervisor.clock.now(),
        nextOccurrence,
      },
    });
    // an actor that ended for good (stopped, or failed past its restarts) takes no more fires, unless a new one replaced it
    void this.supervisor.whenFinished(task.id).then(() => {
      if (this.supervisor.get(task.id) === undefined) this.live.delete(task.id);
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
    const task = await this.collections.tasks.update(org, taskId, { last_fired_at: new Date(occurrence).toISOString() });
    if (!task) return;
    await this.fireTask(org, task, { origin: 'schedule', body: { scheduled_at: new Date(occurrence).toISOString() }, headers: {}, delivery_id: null });
  }

  private async refuse(taskId: string, runId: string): Promise<void> {
    await this.finish(this.orgOf(taskId), [runId], 'failed', 'queue_full', `the task already had ${MAX_PENDING_FIRES} pending fires`);
  }

  private async cancelStored(taskId: string, runIds: readonly string[]): Promise<void> {
    const org = this.live.get(taskId);
    if (org !== undefined) await this.finish(org, runIds, 'cancelled', 'cancelled', 'cancelled before it started');
  }

  private async finish(org: OrgId, runIds: readonly string[], status: TaskRunStatus, reason: string, message: string): Promise<void> {
    const at = new Date(this.supervisor.clock.now()).toISOString();
    for (const runId of runIds) {
      await this.collections.taskRuns.update(org, runId, { status, reason, error_message: message, finished_at: at });
      this.started(runId);
    }
  }

  private runEnded(taskId: string, runId: string): void {
    this.cancelRequested.delete(runId);
    this.supervisor.send<TaskMachineEvent>(taskId, { type: 'RUN_ENDED', runId });
  }

  private async launch(taskId: string, runId: string): Promise<void> {
    const org = this.orgOf(taskId);
    const { collections, config } = this.deps;
    const fail = async (reason: string, message: string, status: TaskRunStatus = 'failed'): Promise<void> => {
      await this.finish(org, [runId], status, reason, message);
      this.runEnded(taskId, runId);
      if (this.deps.activity) await reportTaskRunEnded(this.deps.activity, collections.tasks, org, { taskId, runId }, { status, reason, message });
      if (status === 'failed') this.deps.events.emit('task.run_failed', org, { task_id: taskId, run_id: runId, reason, message });
    };
    try {
      const [run, task] = await Promise.all([collections.taskRuns.get(org, runId), collections.tasks.get(org, taskId)]);
      if (!run || run.status !== 'pending') return this.runEnded(taskId, runId);
      if (!task) return await fail('task_deleted', 'the task was deleted');
      const settings = (await collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
      const agentRef = task.agent ?? DEFAULT_AGENT;
      const agent = (await collections.agents.get(org, agentRef)) ?? (await collections.agents.findOne(org, { name: agentRef }));
      const options = agentRunOptions({ agent: agent ?? null, basePrompt: TASK_SYSTEM_PROMPT, sitePrompt: task.system_prompt });
      let llm: ReturnType<typeof resolveLlmProvider>;
      try {
        llm = resolveLlmProvider(org, { ...settings, llm_model: options.model ?? settings.llm_model }, config, { fetch: this.deps.egress.fetch });
      } catch (error) {
        if (error instanceof LlmError) return await fail('llm_unconfigured', error.message);
        throw error;
      }
      const now = this.supervisor.clock.now();
      const todays = await collections.agentRuns.findAll(org, { task_id: taskId, day: dayOf(now) });
      const spentToday = todays.reduce((sum, previous) => sum + previous.cost_usd, 0);
      const sources = await this.deps.sources.catalogSources(org, task.enabled_source_ids);
      if (this.cancelRequested.has(runId)) return await fail('cancelled', 'cancelled before it started', 'cancelled');
      const { instruction, ...rest } = run.input;
      const text = typeof instruction === 'string' ? instruction : JSON.stringify(instruction ?? '');
      const userContent = Object.keys(rest).length === 0 ? text : `${text}\n\nInput:\n${JSON.stringify(rest, null, 2)}`;
      const recalled = await recalledMemory(collections.memory, org, userContent, options.recall);
      const messages: ChatMessage[] = [
        { role: 'system', content: recalled === null ? options.systemPrompt : `${options.systemPrompt}\n\n${recalled}` },
        { role: 'user', content: userContent === '' ? '(no instruction)' : userContent },
      ];
      await collections.taskRuns.update(org, runId, { status: 'running', started_at: new Date(now).toISOString() });
      await this.deps.agentRuntime.startRun({
        runId,
        orgId: org,
        userId: task.created_by,
        kind: 'task',
        taskId,
        input: run.input,
        messages,
        provider: llm.provider,
        model: llm.model,
        temperature: options.temperature,
        approvalWrite: options.readOnly ? 'allow' : task.approval_write,
        approvalTimeoutMs: settings.approval_timeout_secs * 1000,
        maxTurns: options.maxTurns,
        timeoutMs: config.agentRunTimeoutSecs * 1000,
        sources,
        interceptors: options.interceptors,
        ...(task.realm === null ? {} : { realm: task.realm }),
        costCapUsd: task.cost_cap_usd_per_day,
        spentTodayUsd: spentToday,
        onEnd: async (end) => {
          await collections.taskRuns.update(org, runId, {
            status: end.status,
            reason: end.reason,
            error_message: end.message,
            cost_usd: end.costUsd,
            finished_at: new Date(this.supervisor.clock.now()).toISOString(),
          });
          this.runEnded(taskId, runId);
          if (end.status === 'failed') {
            this.deps.events.emit('task.run_failed', org, { task_id: taskId, run_id: runId, reason: end.reason, message: end.message });
          }
        },
      });
      this.started(runId);
    } catch (error) {
      this.logger.error({ err: error, task: taskId, run: runId }, 'task run could not start');
      await fail('internal_error', error instanceof Error ? error.message : String(error));
    }
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

  /** Task runs a previous process left running: their agent runs were finalized as interrupted; copy that. */
  private async settleInterrupted(): Promise<void> {
    const runs = await this.collections.taskRuns.findAcrossOrgs({ status: 'running' }, 1_000_000);
    for (const run of runs) {
      const agentRun = await this.collections.agentRuns.get(run.org_id, run.id);
      const status: TaskRunStatus = agentRun && agentRun.status !== 'pending' && agentRun.status !== 'running' && agentRun.status !== 'awaiting_approval'
        ? agentRun.status
        : 'failed';
      await this.collections.taskRuns.update(run.org_id, run.id, {
        status,
        reason: agentRun?.reason ?? 'interrupted',
        error_message: agentRun?.error_message ?? 'the service stopped while the run was in flight',
        cost_usd: agentRun?.cost_usd ?? run.cost_usd,
        finished_at: agentRun?.finished_at ?? new Date(this.supervisor.clock.now()).toISOString(),
      });
    }
  }
}
