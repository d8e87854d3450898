/**
 * The agent runtime: supplies the side effects the agent run machine names
 * (the model turn, the tool steps, the transcript, the status writes),
 * registers the `agent_run` kind with the supervisor and starts runs.
 *
 * Chat (and later tasks) call `startRun` with a ready conversation and
 * provider; they follow the run through its feed, cancel it, and answer its
 * approvals through this object. The effects themselves are one file each:
 * model-turn.ts, tool-step.ts, transcript.ts; a run's request and live state
 * are in live-run.ts.
 */
import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import { agentRunMachine, runStatusOf } from '../../actors/agent-run.machine.js';
import { deferredWaitOf } from '../../actors/agent-run.context.js';
import type { AgentRunContext, AgentRunInput, ExecutedTool, RecordEntry, RunEnd, TakenTurn, ToolStepOutput } from '../../actors/agent-run.types.js';
import { createCatalog, type CatalogSource, type ResolvedToolCall, type ToolCatalog } from '../tools/catalog.js';
import type { ToolInterceptor } from '../tools/interceptors.js';
import type { PluginRegistry } from '../tools/registry.js';
import { resolveExecuteConnectorTool, runExecuteConnectorTool } from '../tools/meta-tools.js';
import { failedOutcome } from '../tools/tool-result.js';
import type { AgentRunDoc } from '../collections.js';
import type { PlatformCollections as Collections } from '../collections.js';
import { newId } from '../ids.js';
import type { PriceTable } from '../llm/prices.js';
import type { ChatMessage, ToolCall } from '../llm/types.js';
import type { ToolCallGate } from '../tools/tool-gate.js';
import type { RunFacts, RunObserver } from './run-observer.js';
import type { PlatformEvents } from '../events.js';
import type { OrgId } from '../store/types.js';
import type { ActorInfo, KindHandle, Supervisor } from '../supervisor.js';
import { subjectOf, type LiveRun, type StartRunRequest } from './live-run.js';
import { DeferredCalls } from './deferred-calls.js';
import { modelTurn } from './model-turn.js';
import { HandedTurns } from './handed-turns.js';
import { RunParking, type RunResumer } from './parking.js';
import { RunFeed } from './run-feed.js';
import { toolStep } from './tool-step.js';
import type { TurnRunner } from './turn-runner.js';
import { recordEntry } from './transcript.js';

const AGENT_RUN_KIND = 'agent_run';

export interface AgentRuntimeOptions {
  readonly supervisor: Supervisor;
  readonly collections: Collections;
  readonly plugins: PluginRegistry;
  readonly logger: Logger;
  /** config `LLM_PRICES` */
  readonly prices?: PriceTable;
  /** where `run.succeeded` / `run.failed` go (lifecycle tasks listen) */
  readonly events?: PlatformEvents;
  /** policy enforcement (feature `policies`): decided before the approval gate, interceptor for the rest */
  readonly policies?: ToolCallGate;
  /** runs started and ended, approvals asked and decided (the activity feed and notifications) */
  readonly observer?: RunObserver;
  /** config `AGENT_PARK_AFTER_MS`: an approval wait idle this long is parked (parking.ts); default 5000 */
  readonly parkAfterMs?: number;
}

export type ApprovalAnswer = 'accepted' | 'unknown' | 'not_pending';

const factsOf = (runId: string, request: StartRunRequest): RunFacts => ({
  runId,
  kind: request.kind,
  userId: request.userId,
  taskId: request.taskId ?? null,
  conversationId: request.conversationId ?? null,
  bindingId: request.bindingId ?? null,
});

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export class AgentRuntime {
  private readonly runs = new Map<string, LiveRun>();
  /** approval id -> run id, while the approval waits */
  private readonly approvals = new Map<string, string>();
  /** runs finished but with writes still queued */
  private readonly flushing = new Set<Promise<void>>();
  private readonly supervisor: Supervisor;
  private readonly collections: Collections;
  private readonly plugins: PluginRegistry;
  private readonly logger: Logger;
  private readonly prices: PriceTable;
  private readonly events: PlatformEvents | undefined;
  private readonly policies: ToolCallGate | null;
  private readonly observer: RunObserver | null;
  /** the catalog of runs that see no source (built-ins only): stateless, so shared */
  private sourcelessCatalog: ToolCatalog | null = null;
  private readonly actors: KindHandle<ReturnType<AgentRuntime['machine']>>;
  private readonly parking: RunParking;
  /** tool calls that hand their result over (a media job) instead of waiting in the tool step */
  readonly deferredCalls: DeferredCalls;
  /** model turns handed over to the turn runner (workers) instead of performed in-process */
  readonly handedTurns: HandedTurns;

  constructor(options: AgentRuntimeOptions) {
    this.supervisor = options.supervisor;
    this.collections = options.collections;
    this.plugins = options.plugins;
    this.logger = options.logger;
    this.prices = options.prices ?? {};
    this.events = options.events;
    // with the feature off nothing is evaluated
    this.policies = options.policies?.enabled ? options.policies : null;
    this.observer = options.observer ?? null;
    this.actors = this.supervisor.registerKind({
      kind: AGENT_RUN_KIND,
      logic: this.machine(),
      // a restarted run would repeat tool calls that already had effects: fail it instead
      policy: { onFailure: 'fail' },
      describe: runStatusOf,
      shutdownEvent: { type: 'SHUTDOWN' },
      onFailed: (info, error) => this.endOutside(info, 'internal_error', `the run crashed: ${error instanceof Error ? error.message : String(error)}`),
      onAbandoned: (info) => this.endOutside(info, 'interrupted', 'the service stopped before the run reached a safe point'),
      drain: () => this.drain(),
    });
    this.parking = new RunParking({
      collections: this.collections,
      clock: this.supervisor.clock,
      logger: this.logger,
      parkAfterMs: options.parkAfterMs ?? 5000,
      runs: this.runs,
      approvals: this.approvals,
      waitingContext: (runId) => {
        const snapshot = this.actors.snapshot(runId);
        const waits = ['awaiting_approval', 'awaiting_result', 'awaiting_turn'] as const;
        return waits.some((state) => snapshot?.matches({ active: state })) ? (snapshot?.context ?? null) : null;
      },
      evict: (runId) => this.actors.evict(runId),
      revive: (request, feed, context, runDue) => this.revive(request, feed, context, runDue),
      send: (runId, event) => this.actors.send(runId, event),
      accepting: () => this.supervisor.accepting,
    });
    this.deferredCalls = new DeferredCalls({
      runs: this.runs,
      parking: this.parking,
      liveWait: (runId) => {
        const snapshot = this.actors.snapshot(runId);
        const waits =
          snapshot?.matches({ active: 'awaiting_result' }) || snapshot?.matches({ active: 'awaiting_turn' }) || snapshot?.matches({ active: 'parked' });
        return waits && snapshot ? deferredWaitOf(snapshot.context) : null;
      },
      send: (runId, event) => this.actors.send(runId, event),
    });
    const { runs, parking, deferredCalls: calls, collections, prices } = this;
    const messagesOf = (runId: string) => this.actors.snapshot(runId)?.context.messages;
    this.handedTurns = new HandedTurns({ runs, parking, calls, collections, prices, messagesOf, feed: (runId) => this.feed(runId) });
  }

  /** A site's way to rebuild its parked runs (the `resume.site` of their requests). */
  registerResumer(site: string, resumer: RunResumer): void {
    this.parking.register(site, resumer);
  }

  /** At start, after recovery: the runs a previous process parked wait again. */
  restoreParked(): Promise<number> {
    return this.parking.restore();
  }

  get parkedRuns(): number {
    return this.parking.size;
  }

  /** At shutdown, before the runs stop: runs waiting for a handed-over result or turn park, to come back after the restart (parking.ts). */
  parkForShutdown(): Promise<void> {
    return this.parking.parkForShutdown();
  }

  /** Plugs in where the model turns of the runs `runner.takes` go (set once at start, before any run; handed-turns.ts). */
  useTurnRunner(runner: TurnRunner): void {
    this.handedTurns.use(runner);
  }

  /** Creates the run record and its transcript, and starts its actor. */
  async startRun(request: StartRunRequest): Promise<{ runId: string; feed: RunFeed }> {
    const now = this.supervisor.clock.now();
    const runId = request.runId ?? newId('run');
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    await this.collections.agentRuns.insert(request.orgId, {
      id: runId,
      kind: request.kind,
      status: 'pending',
      reason: null,
      error_message: null,
      input: request.input,
      provider: request.provider.name,
      model: request.model,
      usage: { input_tokens: 0, output_tokens: 0 },
      cost_usd: 0,
      turns: 0,
      conversation_id: request.conversationId ?? null,
      message_id: request.messageId ?? null,
      task_id: request.taskId ?? null,
      created_by: request.userId,
      day: dayOf(now),
      started_at: new Date(now).toISOString(),
      finished_at: null,
    });
    const feed = new RunFeed(runId, request.orgId, this.collections.agentRunEvents, this.logger, () => this.supervisor.clock.now());
    const run = this.liveRun({ ...request, runId }, feed, now + request.timeoutMs);
    feed.append('message_start', { message_id: request.messageId ?? runId });
    if (lastUser) feed.append('message', { role: 'user', content: lastUser.content });
    const input: AgentRunInput = {
      runId,
      messages: request.messages,
      approvalWrite: request.approvalWrite,
      approvalTimeoutMs: request.approvalTimeoutMs,
      maxTurns: request.maxTurns,
      timeoutMs: request.timeoutMs,
      costCapUsd: request.costCapUsd,
      spentTodayUsd: request.spentTodayUsd,
    };
    try {
      this.actors.spawn({ id: runId, input, orgId: request.orgId });
    } catch (error) {
      this.runs.delete(runId);
      await this.collections.agentRuns.update(request.orgId, runId, {
        status: 'failed',
        reason: 'shutdown',
        error_message: 'the service is shutting down',
        finished_at: new Date(this.supervisor.clock.now()).toISOString(),
      });
      throw error;
    }
    this.actors.send(runId, { type: request.cancelled === true ? 'CANCEL' : 'START' });
    this.report(run, (observer, org, facts) => observer.runStarted(org, facts));
    return { runId, feed };
  }

  /** The live feed of a run (also shortly after it ended, until its writes are flushed); a parked run's feed replays its transcript. */
  feed(runId: string): RunFeed | undefined {
    return this.runs.get(runId)?.feed ?? this.parking.feed(runId);
  }

  /** The feed a run's progress goes to: a live run's, or a parked run's somebody listens to (else none: the entry would be stored twice). */
  progressFeed(runId: string): RunFeed | undefined {
    return this.runs.get(runId)?.feed ?? this.parking.openFeed(runId);
  }

  /** Sets the run's cancel flag (a parked run comes back for it); false when the run is not live in this organization. */
  cancel(org: OrgId, runId: string): boolean {
    const run = this.runs.get(runId);
    if (!run) {
      if (this.parking.orgOf(runId) !== org) return false;
      this.parking.deliver(runId, { type: 'CANCEL' }).catch((error: unknown) => {
        this.logger.error({ err: error, run_id: runId }, 'agent run: a parked run could not come back to be cancelled');
      });
      return true;
    }
    if (run.request.orgId !== org || run.finished) return false;
    return this.actors.send(runId, { type: 'CANCEL' });
  }

  /** The run id of an approval that is waiting (live or parked), when it belongs to this organization. */
  pendingApproval(org: OrgId, approvalId: string): string | undefined {
    const runId = this.approvals.get(approvalId);
    if (runId === undefined) return undefined;
    const run = this.runs.get(runId);
    const owner = run ? run.request.orgId : this.parking.orgOf(runId);
    return owner === org ? runId : undefined;
  }

  /** Answers a waiting approval (a parked run comes back for it first). */
  async answer(org: OrgId, approvalId: string, approved: boolean, userId: string): Promise<ApprovalAnswer> {
    const runId = this.pendingApproval(org, approvalId);
    if (runId === undefined) return 'unknown';
    const event = { type: approved ? 'APPROVE' : 'DENY', approvalId, by: userId } as const;
    const sent = this.runs.has(runId) ? this.actors.send(runId, event) : await this.parking.deliver(runId, event);
    // the machine records the decision (and forgets the approval) only when it took the event
    return sent && !this.approvals.has(approvalId) ? 'accepted' : 'not_pending';
  }

  /** Resolves when every finished run's writes are in the store. */
  async drain(): Promise<void> {
    while (this.flushing.size > 0) await Promise.all([...this.flushing]);
  }

  get liveRuns(): number {
    return this.runs.size;
  }

  /** The runtime's side of a run: its request, feed and tool catalog. */
  private liveRun(request: StartRunRequest & { readonly runId: string }, feed: RunFeed, runDue: number): LiveRun {
    const run: LiveRun = {
      id: request.runId,
      request,
      feed,
      catalog: this.catalogFor(request.sources ?? [], [
        ...(this.policies ? [this.policies.interceptor(subjectOf(request))] : []),
        ...(request.interceptors ?? []),
      ]),
      text: '',
      approvalIds: new Set(),
      finished: false,
      runDue,
    };
    this.runs.set(run.id, run);
    return run;
  }

  /** A parked run coming back (parking.ts): a new actor from its stored context, waiting in `active.parked`. */
  private revive(request: StartRunRequest & { readonly runId: string }, feed: RunFeed, context: AgentRunContext, runDue: number): LiveRun {
    const run = this.liveRun(request, feed, runDue);
    const input: AgentRunInput = { ...context, runId: run.id, timeoutMs: request.timeoutMs, resumeFrom: context };
    try {
      this.actors.spawn({ id: run.id, input, orgId: request.orgId });
    } catch (error) {
      this.runs.delete(run.id);
      throw error;
    }
    this.actors.send(run.id, { type: 'START' });
    return run;
  }

  private catalogFor(sources: readonly CatalogSource[], interceptors: readonly ToolInterceptor[]): ToolCatalog {
    if (sources.length > 0 || interceptors.length > 0) return createCatalog(this.plugins, { sources, interceptors });
    this.sourcelessCatalog ??= createCatalog(this.plugins);
    return this.sourcelessCatalog;
  }

  private machine() {
    const live = (runId: string): LiveRun => {
      const run = this.runs.get(runId);
      if (!run) throw new Error(`agent run ${runId} is not live`);
      return run;
    };
    return agentRunMachine.provide({
      actors: {
        llmTurn: fromPromise<TakenTurn, { runId: string; turn: number; messages: readonly ChatMessage[] }>(async ({ input, signal }) => {
          const run = live(input.runId);
          if (this.handedTurns.takes(run)) return { deferred: await this.handedTurns.handOver(run, input.turn) };
          return modelTurn(run, input.messages, signal, this.prices);
        }),
        toolStep: fromPromise<ToolStepOutput, { runId: string; call: ToolCall }>(async ({ input }) => toolStep(live(input.runId), input.call, this.policies)),
        runTool: fromPromise<ExecutedTool, { runId: string; call: ToolCall; resolved: unknown }>(async ({ input, signal }) => {
          const run = live(input.runId);
          // a run that was parked lost its resolved tool: the catalog resolves the call again
          let resolved = input.resolved as ResolvedToolCall | undefined;
          if (resolved === undefined) {
            const resolution = resolveExecuteConnectorTool(run.catalog, input.call.arguments);
            if (!resolution.ok) return failedOutcome(resolution.error);
            resolved = resolution;
          }
          const call = resolved;
          const context = { orgId: run.request.orgId, signal, actorId: run.request.userId, realm: run.request.realm ?? 'default', runId: run.id };
          return this.deferredCalls.execute(run, () => runExecuteConnectorTool(run.catalog, call, context));
        }),
      },
      actions: {
        record: ({ context }, entry: RecordEntry) => {
          const run = live(context.runId);
          recordEntry(run, entry, this.approvals);
          if (entry.type === 'approval_required') {
            this.parking.waiting(run);
            this.report(run, (observer, org, facts) => observer.approvalRequested(org, facts, entry.data.approval_id, entry.data.tool));
          } else if (entry.type === 'tool_deferred') {
            this.parking.waiting(run);
            this.deferredCalls.began(run, entry.data);
          } else if (entry.type === 'tool_result') {
            run.waitingSince = undefined;
          } else if (entry.type === 'message' && entry.turn !== undefined && this.handedTurns.takes(run)) {
            // a handed-over turn's text streamed to the feed as it came (whatever deliveries sent): the reply has the one that counted
            run.waitingSince = undefined;
            run.text += entry.data.content;
          } else if (entry.type === 'approval_decision') {
            run.waitingSince = undefined;
            this.report(run, (observer, org, facts) =>
              observer.approvalDecided(org, facts, entry.data.approval_id, entry.data.decision, entry.data.decided_by),
            );
          }
        },
        setStatus: ({ context }, { status }: { status: 'running' | 'awaiting_approval' }) => {
          const run = live(context.runId);
          run.feed.enqueue(() => this.collections.agentRuns.update(run.request.orgId, run.id, { status }));
        },
        finalize: ({ context }, end: RunEnd) => this.finalize(live(context.runId), end),
        awaitTurn: ({ context }) => this.handedTurns.began(live(context.runId), context),
      },
    });
  }

  private finalize(run: LiveRun, end: RunEnd): void {
    if (run.finished) return;
    run.finished = true;
    const { feed, request } = run;
    for (const approvalId of run.approvalIds) this.approvals.delete(approvalId);
    run.approvalIds.clear();
    if (end.status === 'failed') feed.append('error', { code: end.reason ?? 'internal_error', message: end.message ?? 'the run failed' });
    feed.append('message_end', { finish_reason: end.finishReason, usage: end.usage, status: end.status, cost_usd: end.costUsd });
    feed.end();
    feed.enqueue(() =>
      this.collections.agentRuns.update(request.orgId, run.id, {
        status: end.status,
        reason: end.reason,
        error_message: end.message,
        usage: end.usage,
        cost_usd: end.costUsd,
        turns: end.turns,
        finished_at: new Date(this.supervisor.clock.now()).toISOString(),
      }),
    );
    // task runs report as `task.run_failed` (the task runtime): a lifecycle task on `run.failed` must not fire on its own runs;
    // workflow steps and pipeline agents end inside their workflow or pipeline run, which reports them
    if (request.kind === 'chat' && (end.status === 'succeeded' || end.status === 'failed')) {
      this.events?.emit(end.status === 'succeeded' ? 'run.succeeded' : 'run.failed', request.orgId, {
        run_id: run.id,
        kind: request.kind,
        task_id: request.taskId ?? null,
        reason: end.reason ?? null,
        message: end.message ?? null,
      });
    }
    this.report(run, (observer, org, facts) => observer.runEnded(org, facts, { status: end.status, reason: end.reason, message: end.message }));
    if (request.onEnd) {
      const onEnd = request.onEnd;
      feed.enqueue(() => onEnd(end, run.text));
    }
    const flushed = feed.flushed().then(() => {
      this.runs.delete(run.id);
      this.flushing.delete(flushed);
    });
    this.flushing.add(flushed);
  }

  /** queued behind the run's own writes, so the feed never reports a state the run's record does not hold yet */
  private report(run: LiveRun, write: (observer: RunObserver, org: OrgId, facts: RunFacts) => Promise<void>): void {
    const observer = this.observer;
    if (observer) run.feed.enqueue(() => write(observer, run.request.orgId, factsOf(run.id, run.request)));
  }

  /** A run the machine could not finalize (it crashed, or was stopped at shutdown). */
  private async endOutside(info: ActorInfo, reason: string, message: string): Promise<void> {
    const run = this.runs.get(info.id);
    if (!run) return;
    const record: AgentRunDoc | null = await this.collections.agentRuns.get(run.request.orgId, run.id);
    this.finalize(run, {
      status: 'failed',
      reason,
      message,
      finishReason: 'error',
      usage: record?.usage ?? { input_tokens: 0, output_tokens: 0 },
      costUsd: record?.cost_usd ?? 0,
      turns: record?.turns ?? 0,
    });
    await run.feed.flushed();
  }
}
