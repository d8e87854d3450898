/**
 * `startAgentRun`: the one launcher of agent runs, for chat, tasks and
 * channel bindings alike. It builds what a run is made of (the organization's
 * settings, the agent's options, the LLM provider, the system prompt with
 * recalled memory, the sources and interceptors of its tool catalog, today's
 * spend against the cost cap on the injected clock) and starts it through
 * the agent runtime. Sites only say where the run was asked and what happens
 * with its end.
 *
 * Launching takes a few reads (and may reach an MCP server for its tools): a
 * cancel that arrives meanwhile is remembered, and the run then starts
 * already cancelled (it ends at once, before any model call, with its
 * transcript and its site's `onEnd` like any cancelled run).
 */
import type { AgentRunKind } from '../../runtime/collections.js';
import type { ApprovalWrite, RunEnd } from '../../actors/agent-run.types.js';
import type { CatalogSource } from '../../runtime/tools/catalog.js';
import type { NetPort } from '../../connectors/contract.js';
import type { AgentDoc } from '../../domains/agents/documents.js';
import type { Collections } from '../collections.js';
import type { SettingsDoc } from '../../domains/settings/documents.js';
import { dayOf, type RuntimeClock } from '../../runtime/clock.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { ServiceError } from '../../runtime/errors.js';
import { resolveLlmProvider, type LlmEndpoint } from '../../runtime/llm/index.js';
import { LlmError, type ChatMessage, type LlmProvider } from '../../runtime/llm/types.js';
import { SETTINGS_DEFAULTS } from '../../domains/organizations.js';
import type { SourceDirectory } from '../../domains/sources/directory.js';
import type { OrgId } from '../../runtime/store/types.js';
import { agentRunOptions, recalledMemory, type AgentRunOptions } from '../../domains/agents/agent-options.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { RunFeed } from '../../runtime/agent/run-feed.js';
import type { RunResumer, RunSurroundings } from '../../runtime/agent/parking.js';
import { SITE_PROMPTS, type RunSite } from './system-prompts.js';

export interface LauncherDependencies {
  readonly collections: Collections;
  readonly config: ServiceConfig;
  readonly agentRuntime: AgentRuntime;
  readonly sources: SourceDirectory;
  /** the egress guard: an organization's llm_base_url is reached through it */
  readonly egress: NetPort;
  /** the runtime clock: the cost-cap day is today on it */
  readonly clock: Pick<RuntimeClock, 'now'>;
}

/** Who configures the run: the site, its agent, and the site's own prompt and read-only rule. */
export interface RunSiteInput {
  readonly org: OrgId;
  readonly site: RunSite;
  /** the agent of the run; null when it was deleted (the site's defaults apply) */
  readonly agent: Pick<AgentDoc, 'agent_type' | 'config'> | null;
  /** a prompt the site stores itself (task / channel system_prompt): replaces the agent's */
  readonly sitePrompt?: string | null;
  /** the site is read-only on its own (a read-only binding) */
  readonly siteReadOnly?: boolean;
}

/** A run's configuration, resolved before anything is written (a missing model stops here). */
export interface PreparedRun {
  readonly org: OrgId;
  readonly settings: SettingsDoc | typeof SETTINGS_DEFAULTS;
  readonly options: AgentRunOptions;
  readonly llm: { readonly provider: LlmProvider; readonly model: string; readonly endpoint?: LlmEndpoint };
}

/**
 * Whose daily spend the cap counts: chat runs (and binding runs, which are
 * chat) share the organization's CHAT_COST_CAP_USD_PER_DAY; a task's runs its
 * own cost_cap_usd_per_day.
 */
export type CostCap =
  | { readonly scope: 'chat' }
  | { readonly scope: 'task'; readonly taskId: string; readonly capUsd: number | null }
  /** a cap on this one run alone (a workflow step's cost_cap_usd): nothing spent before it counts */
  | { readonly scope: 'run'; readonly capUsd: number | null };

export interface StartAgentRun {
  readonly runId: string;
  /** who the run acts for */
  readonly userId: string;
  readonly kind: AgentRunKind;
  /** the text memory is recalled for */
  readonly question: string;
  /** the user message of the run; default: the question */
  readonly userMessage?: string;
  /** earlier turns (a conversation, a thread) */
  readonly history?: readonly ChatMessage[];
  /** lines after the system prompt and before recalled memory (where the run was asked) */
  readonly promptContext?: readonly string[];
  /** the site's approval default; a read-only run never asks */
  readonly approvalWrite: ApprovalWrite;
  /** the organization's sources the run may see (null: all visible to the organization) */
  readonly sourceIds: readonly string[] | null;
  /** sources of the site itself (a channel's own bot) */
  readonly siteSources?: readonly CatalogSource[];
  readonly costCap: CostCap;
  readonly realm?: string | null;
  /** stored on the run */
  readonly record: {
    readonly input: Record<string, unknown>;
    readonly conversationId?: string;
    readonly messageId?: string;
    readonly taskId?: string;
    readonly bindingId?: string;
  };
  /** the last step before the run starts (a task run becomes `running`); `at` is the clock's time */
  readonly onStarting?: (at: number) => Promise<void>;
  readonly onEnd: (end: RunEnd, text: string) => Promise<void>;
  /** how the site rebuilds the run after it was parked (its resumer, registered with `registerResumer`); absent: never parked */
  readonly resume?: { readonly site: string; readonly data: Record<string, unknown> };
}

export class AgentRunLauncher {
  /** run id -> its launch, between `begin` and the run's start */
  private readonly launching = new Map<string, { readonly org: OrgId; cancelled: boolean }>();

  constructor(private readonly deps: LauncherDependencies) {}

  /** Settings, agent options and LLM provider of a run; throws llm_unconfigured when the organization has no model. */
  async prepare(input: RunSiteInput): Promise<PreparedRun> {
    const { collections, config, egress } = this.deps;
    const settings = (await collections.settings.findOne(input.org, { singleton: true })) ?? SETTINGS_DEFAULTS;
    const options = agentRunOptions({
      agent: input.agent,
      basePrompt: SITE_PROMPTS[input.site],
      sitePrompt: input.sitePrompt ?? null,
      siteReadOnly: input.siteReadOnly ?? false,
    });
    try {
      const llm = resolveLlmProvider(input.org, { ...settings, llm_model: options.model ?? settings.llm_model }, config, { fetch: egress.fetch });
      return { org: input.org, settings, options, llm };
    } catch (error) {
      if (error instanceof LlmError) throw new ServiceError('llm_unconfigured', error.message);
      throw error;
    }
  }

  /** From now until the run starts (or `abandon`), a cancel of `runId` is remembered. */
  begin(org: OrgId, runId: string): void {
    this.launching.set(runId, { org, cancelled: false });
  }

  /** The launch ended without a run. */
  abandon(runId: string): void {
    this.launching.delete(runId);
  }

  /** Runs of the organization being launched (not yet live). */
  inLaunch(org: OrgId): string[] {
    return [...this.launching].filter(([, launch]) => launch.org === org).map(([runId]) => runId);
  }

  /** Cancels a live run or one being launched; false when the organization has no such run in flight. */
  cancel(org: OrgId, runId: string): boolean {
    if (this.deps.agentRuntime.cancel(org, runId)) return true;
    const launch = this.launching.get(runId);
    if (!launch || launch.org !== org) return false;
    launch.cancelled = true;
    return true;
  }

  /** Builds the run's prompt, tools and budget and starts it (`begin` is implied). */
  async start(prepared: PreparedRun, request: StartAgentRun): Promise<{ runId: string; feed: RunFeed }> {
    const { org, settings, options, llm } = prepared;
    const { runId } = request;
    if (!this.launching.has(runId)) this.begin(org, runId);
    try {
      const sources = [...(await this.catalogSources(org, request.sourceIds)), ...(request.siteSources ?? [])];
      const cost = await this.budget(org, request.costCap);
      const recalled = await recalledMemory(this.deps.collections.memory, org, request.question, options.recall);
      const systemPrompt = [options.systemPrompt, ...(request.promptContext ?? []), recalled ?? ''].filter((part) => part !== '').join('\n\n');
      const at = this.deps.clock.now();
      await request.onStarting?.(at);
      const { record } = request;
      const started = await this.deps.agentRuntime.startRun({
        runId,
        orgId: org,
        userId: request.userId,
        kind: request.kind,
        ...(record.conversationId === undefined ? {} : { conversationId: record.conversationId }),
        ...(record.messageId === undefined ? {} : { messageId: record.messageId }),
        ...(record.taskId === undefined ? {} : { taskId: record.taskId }),
        ...(record.bindingId === undefined ? {} : { bindingId: record.bindingId }),
        input: record.input,
        messages: [{ role: 'system', content: systemPrompt }, ...(request.history ?? []), { role: 'user', content: request.userMessage ?? request.question }],
        provider: llm.provider,
        model: llm.model,
        ...(llm.endpoint === undefined ? {} : { endpoint: llm.endpoint }),
        temperature: options.temperature,
        // read-only: writes are refused by the interceptor, so nobody is asked to approve one
        approvalWrite: options.readOnly ? 'allow' : request.approvalWrite,
        approvalTimeoutMs: settings.approval_timeout_secs * 1000,
        maxTurns: options.maxTurns,
        timeoutMs: this.deps.config.agentRunTimeoutSecs * 1000,
        sources,
        interceptors: options.interceptors,
        ...(request.realm === null || request.realm === undefined ? {} : { realm: request.realm }),
        costCapUsd: cost.capUsd,
        spentTodayUsd: cost.spentUsd,
        cancelled: this.launching.get(runId)?.cancelled === true,
        onEnd: request.onEnd,
        ...(request.resume === undefined ? {} : { resume: request.resume }),
      });
      // a cancel that came while the run record was being written
      if (this.launching.get(runId)?.cancelled === true) this.deps.agentRuntime.cancel(org, runId);
      return started;
    } finally {
      this.launching.delete(runId);
    }
  }

  /** A site's resumer of parked runs (runtime/agent/parking.ts). */
  registerResumer(site: string, resumer: RunResumer): void {
    this.deps.agentRuntime.registerResumer(site, resumer);
  }

  /** What a parked run needs again to continue: the provider (and its endpoint), the tools and interceptors of its site (as configured now). */
  async surroundings(
    input: RunSiteInput,
    sourceIds: readonly string[] | null,
    siteSources: readonly CatalogSource[] = [],
  ): Promise<Omit<RunSurroundings, 'onEnd'>> {
    const { llm, options } = await this.prepare(input);
    const sources = [...(await this.catalogSources(input.org, sourceIds)), ...siteSources];
    return { provider: llm.provider, ...(llm.endpoint === undefined ? {} : { endpoint: llm.endpoint }), sources, interceptors: options.interceptors };
  }

  private async catalogSources(org: OrgId, ids: readonly string[] | null): Promise<CatalogSource[]> {
    return ids !== null && ids.length === 0 ? [] : this.deps.sources.catalogSources(org, ids);
  }

  /** The cap and what was spent under it today (UTC, on the runtime clock). */
  private async budget(org: OrgId, cap: CostCap): Promise<{ capUsd: number | null; spentUsd: number }> {
    const capUsd = cap.scope === 'chat' ? this.deps.config.chatCostCapUsdPerDay : cap.capUsd;
    if (capUsd === null || cap.scope === 'run') return { capUsd, spentUsd: 0 };
    const day = dayOf(this.deps.clock.now());
    const runs = await this.deps.collections.agentRuns.findAll(org, cap.scope === 'chat' ? { day, kind: 'chat' } : { day, task_id: cap.taskId });
    return { capUsd, spentUsd: runs.reduce((sum, run) => sum + run.cost_usd, 0) };
  }
}
