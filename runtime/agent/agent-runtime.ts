/**
 * The agent runtime: supplies the side effects the agent run machine names
 * (the model turn, the tool steps, the transcript, the status writes),
 * registers the `agent_run` kind with the supervisor and starts runs.
 *
 * Chat (and later tasks) call `startRun` with a ready conversation and
 * provider; they follow the run through its feed, cancel it, and answer its
 * approvals through this object.
 */
import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import {
  agentRunMachine,
  runStatusOf,
  type AgentRunInput,
  type RecordEntry,
  type RunEnd,
  type ToolStepOutput,
  type TurnOutput,
} from '../../actors/agent-run.machine.js';
import { createCatalog, type CatalogSource, type ResolvedToolCall, type ToolCatalog } from '../../connectors/catalog.js';
import type { ToolInterceptor } from '../../connectors/interceptors.js';
import type { PluginRegistry } from '../../connectors/loader.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  META_TOOL_DEFINITIONS,
  resolveExecuteConnectorTool,
  runExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
  type SearchConnectorToolsResult,
} from '../../connectors/meta-tools.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../../connectors/tool-result.js';
import type { AgentRunDoc, Collections } from '../collections.js';
import { newId } from '../ids.js';
import { costUsd, type PriceTable } from '../llm/prices.js';
import type { ChatMessage, LlmProvider, ToolCall, Usage } from '../llm/types.js';
import type { OrgId } from '../store/types.js';
import type { ActorInfo, KindHandle, Supervisor } from '../supervisor.js';
import type { PlatformEvents } from '../events.js';
import { RunFeed } from './run-feed.js';
import type { PolicyGate, PolicySubject } from '../policies/gate.js';

export const AGENT_RUN_KIND = 'agent_run';

/** What starting a run takes: the machine's input (less its id, which may be given) and the run's surroundings. */
export interface StartRunRequest extends Omit<AgentRunInput, 'runId'> {
  /** the run's id when the caller needs it before the start (a chat message names it); default: a new one */
  readonly runId?: string;
  readonly orgId: OrgId;
  /** who the run acts for */
  readonly userId: string;
  readonly kind: 'chat' | 'task';
  readonly conversationId?: string | null;
  readonly messageId?: string | null;
  readonly taskId?: string | null;
  /** stored on the run as its input */
  readonly input: Record<string, unknown>;
  readonly provider: LlmProvider;
  readonly model: string;
  readonly temperature?: number;
  /** sources the run may see (the built-in sourceless tools are always there) */
  readonly sources?: readonly CatalogSource[];
  /** the realm the run works in (graph and memory tools scope to it); default `default` */
  readonly realm?: string;
  /** wrapped around every tool call of this run (policy, read-only rules, audit), first = outermost */
  readonly interceptors?: readonly ToolInterceptor[];
  /** the channel binding the run answers for (policy input `subject.binding`) */
  readonly bindingId?: string | null;
  /** called once with the end and the reply's whole text, after the run's writes */
  readonly onEnd?: (end: RunEnd, text: string) => Promise<void>;
  /** cancelled while it was being launched: the run starts and ends at once as cancelled, before any model call */
  readonly cancelled?: boolean;
}

interface LiveRun {
  readonly id: string;
  readonly request: StartRunRequest;
  readonly feed: RunFeed;
  readonly catalog: ToolCatalog;
  /** every text delta of the run, in order */
  text: string;
  /** approvals of this run still waiting */
  readonly approvalIds: Set<string>;
  finished: boolean;
}

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
  readonly policies?: PolicyGate;
}

export type ApprovalAnswer = 'accepted' | 'unknown' | 'not_pending';

const subjectOf = (request: StartRunRequest): PolicySubject => ({
  task: request.taskId ?? null,
  binding: request.bindingId ?? null,
  user: request.userId,
});

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The connector an `execute_connector_tool` call targets (`memory` of `memory.store`), else null. */
function connectorOf(call: { name: string; arguments: Record<string, unknown> }): string | null {
  if (call.name !== EXECUTE_CONNECTOR_TOOL) return null;
  const tool = call.arguments['tool'];
  if (typeof tool !== 'string' || !tool.includes('.')) return null;
  return tool.slice(0, tool.indexOf('.'));
}

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
  private readonly policies: PolicyGate | null;
  /** the catalog of runs that see no source (built-ins only): stateless, so shared */
  private sourcelessCatalog: ToolCatalog | null = null;
  private readonly actors: KindHandle<ReturnType<AgentRuntime['machine']>>;

  constructor(options: AgentRuntimeOptions) {
    this.supervisor = options.supervisor;
    this.collections = options.collections;
    this.plugins = options.plugins;
    this.logger = options.logger;
    this.prices = options.prices ?? {};
    this.events = options.events;
    // with the feature off nothing is evaluated
    this.policies = options.policies?.enabled ? options.policies : null;
    this.actors = this.supervisor.registerKind({
      kind: AGENT_RUN_KIND,
      logic: this.machine(),
      // a restarted run would repeat tool calls that already had effects: fail it instead
      policy: { onFailure: 'fail' },
      describe: runStatusOf,
      shutdownEvent: { type: 'SHUTDOWN' },
      onFailed: (info, error) =>
        this.endOutside(info, 'internal_error', `the run crashed: ${error instanceof Error ? error.message : String(error)}`),
      onAbandoned: (info) => this.endOutside(info, 'interrupted', 'the service stopped before the run reached a safe point'),
      drain: () => this.drain(),
    });
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
    const run: LiveRun = {
      id: runId,
      request,
      feed,
      catalog: this.catalogFor(request.sources ?? [], [
        ...(this.policies ? [this.policies.interceptor(subjectOf(request))] : []),
        ...(request.interceptors ?? []),
      ]),
      text: '',
      approvalIds: new Set(),
      finished: false,
    };
    this.runs.set(runId, run);
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
    return { runId, feed };
  }

  /** The live feed of a run (also shortly after it ended, until its writes are flushed). */
  feed(runId: string): RunFeed | undefined {
    return this.runs.get(runId)?.feed;
  }

  /** Sets the run's cancel flag; false when the run is not live in this organization. */
  cancel(org: OrgId, runId: string): boolean {
    const run = this.runs.get(runId);
    if (!run || run.request.orgId !== org || run.finished) return false;
    return this.actors.send(runId, { type: 'CANCEL' });
  }

  /** The run id of an approval that is waiting, when it belongs to this organization. */
  pendingApproval(org: OrgId, approvalId: string): string | undefined {
    const runId = this.approvals.get(approvalId);
    const run = runId === undefined ? undefined : this.runs.get(runId);
    return run && run.request.orgId === org ? run.id : undefined;
  }

  /** Answers a waiting approval. */
  answer(org: OrgId, approvalId: string, approved: boolean, userId: string): ApprovalAnswer {
    const runId = this.pendingApproval(org, approvalId);
    if (runId === undefined) return 'unknown';
    const sent = this.actors.send(runId, { type: approved ? 'APPROVE' : 'DENY', approvalId, by: userId });
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
        llmTurn: fromPromise<TurnOutput, { runId: string; messages: readonly ChatMessage[] }>(async ({ input, signal }) => {
          const run = live(input.runId);
          return this.turn(run, input.messages, signal);
        }),
        toolStep: fromPromise<ToolStepOutput, { runId: string; call: ToolCall }>(async ({ input }) => this.toolStep(live(input.runId), input.call)),
        runTool: fromPromise<ToolOutcome, { runId: string; call: ToolCall; resolved: unknown }>(async ({ input, signal }) => {
          const run = live(input.runId);
          return runExecuteConnectorTool(run.catalog, input.resolved as ResolvedToolCall, {
            orgId: run.request.orgId,
            signal,
            actorId: run.request.userId,
            realm: run.request.realm ?? 'default',
            runId: run.id,
          });
        }),
      },
      actions: {
        record: ({ context }, entry: RecordEntry) => this.record(live(context.runId), entry),
        setStatus: ({ context }, { status }: { status: 'running' | 'awaiting_approval' }) => {
          const run = live(context.runId);
          run.feed.enqueue(() => this.collections.agentRuns.update(run.request.orgId, run.id, { status }));
        },
        finalize: ({ context }, end: RunEnd) => this.finalize(live(context.runId), end),
      },
    });
  }

  private async turn(run: LiveRun, messages: readonly ChatMessage[], signal: AbortSignal): Promise<TurnOutput> {
    let text = '';
    const toolCalls: ToolCall[] = [];
    let finishReason: TurnOutput['finishReason'] = 'end_turn';
    let usage: Usage = { input_tokens: 0, output_tokens: 0 };
    const stream = run.request.provider.stream({
      model: run.request.model,
      messages,
      tools: META_TOOL_DEFINITIONS,
      signal,
      ...(run.request.temperature === undefined ? {} : { temperature: run.request.temperature }),
    });
    for await (const event of stream) {
      if (event.type === 'text_delta') {
        if (event.text === '' || signal.aborted) continue;
        text += event.text;
        run.text += event.text;
        run.feed.append('content_delta', { delta: event.text });
      } else if (event.type === 'tool_call') {
        toolCalls.push(event.call);
      } else {
        finishReason = event.finish_reason;
        usage = event.usage;
      }
    }
    return { text, toolCalls, finishReason, usage, costUsd: costUsd(run.request.model, usage, this.prices) };
  }

  private async toolStep(run: LiveRun, call: ToolCall): Promise<ToolStepOutput> {
    if (call.name === SEARCH_CONNECTOR_TOOLS) {
      return { kind: 'result', outcome: await this.withoutDeniedTools(run, applySearchConnectorTools(run.catalog, call.arguments)) };
    }
    if (call.name !== EXECUTE_CONNECTOR_TOOL) {
      return {
        kind: 'result',
        outcome: failedOutcome(
          toolErrorBody('unknown_tool', `no tool named "${call.name}": call ${SEARCH_CONNECTOR_TOOLS} or ${EXECUTE_CONNECTOR_TOOL}`, {
            suggestions: [SEARCH_CONNECTOR_TOOLS, EXECUTE_CONNECTOR_TOOL],
          }),
        ),
      };
    }
    const resolution = resolveExecuteConnectorTool(run.catalog, call.arguments);
    if (!resolution.ok) return { kind: 'result', outcome: failedOutcome(resolution.error) };
    if (this.policies) {
      // before the approval gate: a denied write never asks anybody
      const denied = await this.policies.precheck(
        { name: resolution.tool.name, connector: resolution.tool.connector, effect: resolution.effect, args: resolution.args, orgId: run.request.orgId, runId: run.id },
        subjectOf(run.request),
      );
      if (denied) return { kind: 'result', outcome: denied };
    }
    return {
      kind: 'execute',
      tool: resolution.tool.name,
      args: resolution.args,
      effect: resolution.effect,
      resolved: resolution,
    };
  }

  /** search results without the tools the organization's policies deny whatever the arguments */
  private async withoutDeniedTools(run: LiveRun, outcome: ToolOutcome): Promise<ToolOutcome> {
    const policies = this.policies;
    if (!policies || !('result' in outcome)) return outcome;
    const found = outcome.result as SearchConnectorToolsResult;
    const hidden = await Promise.all(found.tools.map((tool) => policies.hides(run.request.orgId, tool, subjectOf(run.request))));
    return { result: { ...found, tools: found.tools.filter((_tool, index) => !hidden[index]) } };
  }

  private record(run: LiveRun, entry: RecordEntry): void {
    const { feed } = run;
    switch (entry.type) {
      case 'message':
        // one entry per model turn: the assistant message with its usage and cost
        feed.append('message', entry.turn === undefined ? { ...entry.data } : { ...entry.data, ...entry.turn });
        return;
      case 'tool_call_start':
        feed.append('tool_call_start', {
          tool_call_id: entry.data.tool_call_id,
          name: entry.data.name,
          connector: connectorOf(entry.data),
          arguments: entry.data.arguments,
        });
        return;
      case 'approval_required':
        this.approvals.set(entry.data.approval_id, run.id);
        run.approvalIds.add(entry.data.approval_id);
        feed.append('approval_required', { ...entry.data }, entry.data.approval_id);
        return;
      case 'approval_decision':
        this.approvals.delete(entry.data.approval_id);
        run.approvalIds.delete(entry.data.approval_id);
        feed.append('approval_decision', { ...entry.data }, entry.data.approval_id);
        return;
      case 'tool_result':
        feed.append('tool_result', { tool_call_id: entry.data.tool_call_id, name: entry.data.name, result: entry.data.outcome });
        return;
    }
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
    // task runs report as `task.run_failed` (the task runtime): a lifecycle task on `run.failed` must not fire on its own runs
    if (request.kind !== 'task' && (end.status === 'succeeded' || end.status === 'failed')) {
      this.events?.emit(end.status === 'succeeded' ? 'run.succeeded' : 'run.failed', request.orgId, {
        run_id: run.id, kind: request.kind, task_id: request.taskId ?? null, reason: end.reason ?? null, message: end.message ?? null,
      });
    }
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
