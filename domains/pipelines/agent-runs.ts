/**
 * Agent runs inside a pipeline run (`/pipeline-agent/runs`): started through
 * the one launcher (`agents/start-agent-run.ts`) in the pipeline run's
 * organization, with the pipeline's realm, for the user who holds the token.
 * What the run does is mirrored into the pipeline run as entries of phase
 * `agent` (level `agent`): its tool calls and results, its assistant
 * messages, a progress report per model turn (turn / max turns, below 1) and
 * one when it ends (1.0). An agent run belongs to its pipeline run: another
 * run's token finds nothing (404), and the pipeline run's end cancels it.
 * Its write tools ask for an approval, answered with the pipeline token (or
 * a login token with `pipeline:manage`) like a task run's. Idle in that wait,
 * it is parked like a task run (runtime/agent/parking.ts, resumer
 * `pipeline_agent`), also across a restart: back, it is mirrored again and its
 * end completes its record as if it had never left.
 */
import type { Logger } from 'pino';
import type { AgentRunLauncher } from '../agents/start-agent-run.js';
import type { Collections } from '../collections.js';
import { DEFAULT_AGENT } from '../organizations.js';
import type { PipelineAgentRunDoc } from './documents.js';
import type { PipelineRuns, RunReport } from './runs.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { RunFeed, TranscriptEvent } from '../../runtime/agent/run-feed.js';
import type { RunResumer } from '../../runtime/agent/parking.js';
import type { RunEnd } from '../../actors/agent-run.types.js';
import type { AgentRunDoc } from '../../runtime/collections.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { answerRunApproval, type RunApprovalAnswer } from '../tasks/run-approval.js';
import type { OrgId } from '../../runtime/store/types.js';

/** longest assistant message or tool name mirrored into a log entry */
const MIRRORED_CHARS = 2000;
/** how long `wait` holds the answer at most; the run goes on after it */
const MAX_WAIT_MS = 120_000;
/** the resumer of parked pipeline agent runs (runtime/agent/parking.ts) */
const PIPELINE_AGENT_SITE = 'pipeline_agent';

export interface PipelineAgentRequest {
  readonly instruction: string;
  /** an agent id or name; absent: the organization's default agent */
  readonly agent?: string | undefined;
  readonly inputs?: Record<string, unknown> | undefined;
}

/** who asks: the user behind the token, the sources it may see */
export interface PipelineAgentCaller {
  readonly userId: string;
  readonly sourceIds: readonly string[] | null;
}

/** an agent run as `/pipeline-agent/runs/:id` shows it */
export interface PipelineAgentRunView {
  readonly record: PipelineAgentRunDoc;
  /** null while it is being launched */
  readonly run: AgentRunDoc | null;
}

export interface PipelineAgentDeps {
  readonly collections: Pick<Collections, 'pipelines' | 'pipelineAgentRuns' | 'agentRuns' | 'agentRunEvents' | 'agents'>;
  readonly runs: PipelineRuns;
  readonly launcher: AgentRunLauncher;
  readonly agentRuntime: Pick<AgentRuntime, 'feed' | 'pendingApproval' | 'answer'>;
  readonly logger: Logger;
  readonly clock: Pick<RuntimeClock, 'setTimeout' | 'clearTimeout'>;
}

export class PipelineAgentRuns {
  /** agent run id -> callbacks waiting for its end */
  private readonly waiters = new Map<string, (() => void)[]>();
  /** agent runs whose feed is mirrored (a run parked in this process keeps its follower; one back after a restart gets a new one) */
  private readonly following = new Set<string>();

  constructor(private readonly deps: PipelineAgentDeps) {
    deps.runs.onRunEnded((org, runId) => void this.cancelAll(org, runId));
    deps.launcher.registerResumer(PIPELINE_AGENT_SITE, this.resumer);
  }

  /** Starts an agent run in `pipelineRunId` (which must be running); with `wait`, answers once it ended (or after MAX_WAIT_MS). */
  async start(org: OrgId, pipelineRunId: string, caller: PipelineAgentCaller, request: PipelineAgentRequest, wait: boolean): Promise<PipelineAgentRunView> {
    const { collections, launcher, runs } = this.deps;
    const pipelineRun = await runs.get(org, pipelineRunId);
    if (pipelineRun.status !== 'running') {
      throw new ServiceError('conflict', `pipeline run ${pipelineRunId} has ended (${pipelineRun.status})`, { status: pipelineRun.status });
    }
    const pipeline = await collections.pipelines.get(org, pipelineRun.pipeline_id);
    const agentRef = request.agent ?? DEFAULT_AGENT;
    const agent = (await collections.agents.get(org, agentRef)) ?? (await collections.agents.findOne(org, { name: agentRef }));
    if (!agent && request.agent !== undefined) throw new ServiceError('not_found', `agent ${request.agent} not found`, { field: 'agent' });
    const prepared = await launcher.prepare({ org, site: 'task', agent });
    const runId = newId('run');
    const inputs = request.inputs ?? {};
    const record = await collections.pipelineAgentRuns.insert(org, {
      id: runId,
      pipeline_run_id: pipelineRun.id,
      pipeline_id: pipelineRun.pipeline_id,
      instruction: request.instruction,
      agent: request.agent ?? null,
      inputs,
      output: null,
      created_by: caller.userId,
    });
    const ended = wait ? this.whenEnded(runId) : null;
    const userMessage = Object.keys(inputs).length === 0 ? request.instruction : `${request.instruction}\n\nInput:\n${JSON.stringify(inputs, null, 2)}`;
    launcher.begin(org, runId);
    try {
      const { feed } = await launcher.start(prepared, {
        runId,
        userId: caller.userId,
        kind: 'pipeline_agent',
        question: request.instruction,
        userMessage,
        promptContext: [`You run inside pipeline ${pipeline?.name ?? pipelineRun.pipeline_id}, run ${pipelineRun.id}; your steps are shown in its log.`],
        // a write waits for an approval (POST /pipeline-agent/runs/:id/approvals/:approval_id); unanswered, it is denied at the timeout
        approvalWrite: 'ask',
        sourceIds: caller.sourceIds,
        costCap: { scope: 'task', taskId: pipelineRun.pipeline_id, capUsd: null },
        realm: pipeline?.realm ?? null,
        record: { input: { instruction: request.instruction, inputs, pipeline_run_id: pipelineRun.id } },
        onEnd: this.onEnd(org, pipelineRun.id, runId),
        resume: {
          site: PIPELINE_AGENT_SITE,
          data: { pipeline_run_id: pipelineRun.id, source_ids: caller.sourceIds, max_turns: prepared.options.maxTurns },
        },
      });
      this.follow(org, pipelineRun.id, feed, prepared.options.maxTurns, 0);
      // the pipeline run may have ended while this one was launched
      if ((await runs.get(org, pipelineRun.id)).status !== 'running') launcher.cancel(org, runId);
    } catch (error) {
      launcher.abandon(runId);
      this.release(runId);
      await collections.pipelineAgentRuns.delete(org, runId);
      throw error;
    }
    if (ended) await ended;
    const [latest, run] = await Promise.all([collections.pipelineAgentRuns.get(org, runId), collections.agentRuns.get(org, runId)]);
    return { record: latest ?? record, run };
  }

  /** The agent run, when it belongs to `pipelineRunId` (null: any run of the organization); 404 otherwise. */
  async get(org: OrgId, agentRunId: string, pipelineRunId: string | null): Promise<PipelineAgentRunView> {
    const record = await this.deps.collections.pipelineAgentRuns.get(org, agentRunId);
    if (!record || (pipelineRunId !== null && record.pipeline_run_id !== pipelineRunId)) {
      throw new ServiceError('not_found', `agent run ${agentRunId} not found`);
    }
    return { record, run: await this.deps.collections.agentRuns.get(org, agentRunId) };
  }

  /** the live transcript of a run still going, or undefined */
  feed(agentRunId: string): RunFeed | undefined {
    return this.deps.agentRuntime.feed(agentRunId);
  }

  /** the stored transcript */
  events(org: OrgId, agentRunId: string) {
    return this.deps.collections.agentRunEvents.findAll(org, { run_id: agentRunId });
  }

  /** Answers an approval the agent run asked for (a write tool); 404 for another run's, 409 once it is no longer waiting. */
  async answerApproval(org: OrgId, agentRunId: string, pipelineRunId: string | null, answer: Omit<RunApprovalAnswer, 'orgId'>) {
    const { record, run } = await this.get(org, agentRunId, pipelineRunId);
    return answerRunApproval(this.deps, { id: record.id, status: run?.status ?? 'pending' }, { ...answer, orgId: org });
  }

  /** `cancelling` when the run was live (it stops after its current step), `ended` when it was over already. */
  cancel(org: OrgId, agentRunId: string): 'cancelling' | 'ended' {
    return this.deps.launcher.cancel(org, agentRunId) ? 'cancelling' : 'ended';
  }

  /** Cancels every agent run of a pipeline run (it ended). */
  private async cancelAll(org: OrgId, pipelineRunId: string): Promise<void> {
    try {
      for (const record of await this.deps.collections.pipelineAgentRuns.findAll(org, { pipeline_run_id: pipelineRunId })) {
        this.deps.launcher.cancel(org, record.id);
      }
    } catch (error) {
      this.deps.logger.error({ err: error, pipeline_run: pipelineRunId }, 'agent runs of an ended pipeline run could not be cancelled');
    }
  }

  /** What the run's end writes: its output on the record, the last progress entry, the `wait` answered. */
  private onEnd(org: OrgId, pipelineRunId: string, runId: string): (end: RunEnd, text: string) => Promise<void> {
    return async (end, text) => {
      await this.deps.collections.pipelineAgentRuns.update(org, runId, { output: text });
      await this.mirror(org, pipelineRunId, { kind: 'progress', fraction: 1, message: `agent run ${runId} ${end.status}`, phase: 'agent' });
      this.release(runId);
    };
  }

  /** Rebuilds a parked run with its agent as it is now and the sources its caller had; it is mirrored into its pipeline run again. */
  private readonly resumer: RunResumer = async (org, run, data) => {
    const { collections, launcher } = this.deps;
    const record = await collections.pipelineAgentRuns.get(org, run.id);
    const pipelineRunId = record?.pipeline_run_id ?? (typeof data['pipeline_run_id'] === 'string' ? data['pipeline_run_id'] : '');
    const agentRef = record?.agent ?? DEFAULT_AGENT;
    const agent = (await collections.agents.get(org, agentRef)) ?? (await collections.agents.findOne(org, { name: agentRef }));
    const sources = data['source_ids'];
    const sourceIds = Array.isArray(sources) ? sources.filter((id): id is string => typeof id === 'string') : null;
    const maxTurns = typeof data['max_turns'] === 'number' ? data['max_turns'] : 1;
    return {
      ...(await launcher.surroundings({ org, site: 'task', agent }, sourceIds)),
      onEnd: this.onEnd(org, pipelineRunId, run.id),
      revived: (feed) => {
        if (!this.following.has(run.id)) this.follow(org, pipelineRunId, feed, maxTurns, feed.lastSeq);
      },
    };
  };

  /** Mirrors the run's transcript into the pipeline run as it happens (entries up to `mirroredSeq` were mirrored before: only counted). */
  private follow(org: OrgId, pipelineRunId: string, feed: RunFeed, maxTurns: number, mirroredSeq: number): void {
    let turns = 0;
    this.following.add(feed.runId);
    const entryOf = (event: TranscriptEvent): RunReport | null => {
      const { data } = event;
      if (event.type === 'tool_call_start') return agentLog(`tool call ${clip(String(data['name']))}`);
      if (event.type === 'tool_result') {
        const outcome = data['result'] as { ok?: unknown; error?: unknown } | undefined;
        const failed = outcome !== undefined && (outcome.ok === false || (outcome.error !== undefined && outcome.error !== null));
        return agentLog(`tool result ${clip(String(data['name']))}: ${failed ? 'failed' : 'ok'}`);
      }
      if (event.type === 'message' && data['role'] === 'assistant') {
        turns += 1;
        const content = typeof data['content'] === 'string' ? data['content'] : '';
        if (content !== '') void this.mirror(org, pipelineRunId, agentLog(clip(content)));
        return { kind: 'progress', fraction: Math.min(0.99, turns / Math.max(1, maxTurns)), message: `agent turn ${turns}`, phase: 'agent' };
      }
      if (event.type === 'approval_required') {
        return {
          kind: 'log',
          level: 'warn',
          message: clip(`tool ${String(data['tool'])} waits for an approval (${String(data['approval_id'])})`),
          phase: 'agent',
        };
      }
      if (event.type === 'error')
        return { kind: 'log', level: 'error', message: clip(`agent run failed: ${String(data['code'])}: ${String(data['message'])}`), phase: 'agent' };
      return null;
    };
    feed.subscribe(0, {
      event: (event) => {
        if (event.seq <= mirroredSeq) {
          if (event.type === 'message' && event.data['role'] === 'assistant') turns += 1;
          return;
        }
        const entry = entryOf(event);
        if (entry) void this.mirror(org, pipelineRunId, entry);
      },
      end: () => this.following.delete(feed.runId),
    });
  }

  /** An entry for the pipeline run; dropped when it has ended (its log is closed). */
  private async mirror(org: OrgId, pipelineRunId: string, report: RunReport): Promise<void> {
    try {
      await this.deps.runs.report(org, pipelineRunId, report);
    } catch (error) {
      if (!(error instanceof ServiceError)) this.deps.logger.error({ err: error, pipeline_run: pipelineRunId }, 'an agent step could not be logged');
    }
  }

  private whenEnded(agentRunId: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.deps.clock.setTimeout(() => this.release(agentRunId), MAX_WAIT_MS);
      const list = this.waiters.get(agentRunId) ?? [];
      list.push(() => {
        this.deps.clock.clearTimeout(timer);
        resolve();
      });
      this.waiters.set(agentRunId, list);
    });
  }

  private release(agentRunId: string): void {
    const list = this.waiters.get(agentRunId);
    this.waiters.delete(agentRunId);
    for (const resolve of list ?? []) resolve();
  }
}

const clip = (text: string): string => (text.length > MIRRORED_CHARS ? `${text.slice(0, MIRRORED_CHARS)}…` : text);
const agentLog = (message: string): RunReport => ({ kind: 'log', level: 'agent', message, phase: 'agent' });
