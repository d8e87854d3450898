/**
 * Pipeline runs: started by a user, executed elsewhere (a CI job, a
 * sandbox), reporting back through `/pipeline-agent/*` with the
 * pipeline-scoped token issued at start. Log lines and progress reports are
 * entries numbered per run (`seq`); the run record keeps the latest progress.
 */
import type { Collections } from '../collections.js';
import type { PipelineDoc, PipelineRunDoc, PipelineRunEntryDoc, PipelineRunStatus } from './documents.js';
import type { IdentityService } from '../../runtime/auth/identity.js';
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import type { OrgId } from '../../runtime/store/types.js';
import { systemClock, type RuntimeClock } from '../../runtime/clock.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'agent', 'graph'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

const EXPIRED_ERROR = 'the run token expired before the run reported an outcome';

export type RunReport =
  | { readonly kind: 'log'; readonly level: LogLevel; readonly message: string; readonly phase: string | null }
  | { readonly kind: 'progress'; readonly fraction: number; readonly message: string | null; readonly phase: string | null };

export class PipelineRuns {
  /** per-run tail of the previous report: entries of one run are numbered one at a time */
  private readonly tails = new Map<string, Promise<unknown>>();
  /** told when a run ends (finished, cancelled, expired): its agent runs are cancelled */
  private readonly endListeners: ((org: OrgId, runId: string) => void)[] = [];

  constructor(
    private readonly collections: Collections,
    private readonly identity: IdentityService,
    /** token deadlines */
    private readonly clock: Pick<RuntimeClock, 'now'> = systemClock,
  ) {}

  /** `listener` is called (synchronously, never throwing into the caller) each time a run ends. */
  onRunEnded(listener: (org: OrgId, runId: string) => void): void {
    this.endListeners.push(listener);
  }

  /** Creates the run and its token (valid `ttlSeconds`); the token is returned once and never stored. */
  async start(org: OrgId, pipeline: PipelineDoc, userId: string, parameters: Record<string, unknown>, ttlSeconds: number) {
    const expiresAt = new Date(this.clock.now() + ttlSeconds * 1000);
    const run = await this.collections.pipelineRuns.insert(org, {
      pipeline_id: pipeline.id,
      pipeline_version: pipeline.version,
      status: 'running',
      parameters,
      progress: null,
      phase: null,
      log_count: 0,
      started_by: userId,
      token_expires_at: expiresAt.toISOString(),
      finished_at: null,
      error: null,
    });
    const token = await this.identity.issuePipelineToken(userId, org, run.id, expiresAt);
    return { run, token };
  }

  /**
   * The run; one still `running` after its token expired is failed on the
   * way out (nobody can report to it any more, so it would never end).
   */
  async get(org: OrgId, runId: string): Promise<PipelineRunDoc> {
    const run = await this.collections.pipelineRuns.get(org, runId);
    if (!run) throw new ServiceError('not_found', `pipeline run ${runId} not found`);
    if (run.status === 'running' && Date.parse(run.token_expires_at) <= this.clock.now()) {
      const expired = await this.collections.pipelineRuns.update(org, run.id, {
        status: 'failed',
        finished_at: run.token_expires_at,
        error: EXPIRED_ERROR,
      });
      this.ended(org, run.id);
      return expired ?? run;
    }
    return run;
  }

  /** Fails the pipeline's runs whose token expired while running (before a listing or a delete check). */
  async settleExpired(org: OrgId, pipelineId: string): Promise<void> {
    for (const run of await this.collections.pipelineRuns.findAll(org, { pipeline_id: pipelineId, status: 'running' })) {
      await this.get(org, run.id);
    }
  }

  /** Ends a running run; thrown (409) when it has ended already. */
  async finish(org: OrgId, runId: string, status: Exclude<PipelineRunStatus, 'running'>, error: string | null): Promise<PipelineRunDoc> {
    return this.serialized(runId, async () => {
      const run = await this.running(org, runId);
      const updated = await this.collections.pipelineRuns.update(org, run.id, { status, finished_at: nowIso(), error });
      this.ended(org, run.id);
      return updated ?? run;
    });
  }

  /** Appends a log line or progress report to a running run. */
  async report(org: OrgId, runId: string, report: RunReport): Promise<PipelineRunEntryDoc> {
    return this.serialized(runId, async () => {
      const run = await this.running(org, runId);
      const seq = run.log_count + 1;
      const entry = await this.collections.pipelineRunEntries.insert(org, {
        run_id: run.id,
        seq,
        kind: report.kind,
        level: report.kind === 'log' ? report.level : 'info',
        message: report.message,
        phase: report.phase,
        fraction: report.kind === 'progress' ? report.fraction : null,
      });
      await this.collections.pipelineRuns.update(org, run.id, {
        log_count: seq,
        phase: report.phase ?? run.phase,
        ...(report.kind === 'progress' ? { progress: { fraction: report.fraction, message: report.message, phase: report.phase, at: entry.created_at } } : {}),
      });
      return entry;
    });
  }

  /** Entries in order, `after` the given seq. */
  async entries(org: OrgId, runId: string, after: number, limit: number): Promise<PipelineRunEntryDoc[]> {
    const all = await this.collections.pipelineRunEntries.findAll(org, { run_id: runId });
    return all
      .filter((entry) => entry.seq > after)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit);
  }

  private async running(org: OrgId, runId: string): Promise<PipelineRunDoc> {
    const run = await this.get(org, runId);
    if (run.status !== 'running') {
      throw new ServiceError('conflict', `pipeline run ${runId} has ended (${run.status})`, { status: run.status });
    }
    return run;
  }

  private ended(org: OrgId, runId: string): void {
    for (const listener of this.endListeners) {
      try {
        listener(org, runId);
      } catch {
        // a listener's failure is its own: the run has ended regardless
      }
    }
  }

  private serialized<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(runId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.tails.set(runId, tail);
    void tail.then(() => {
      if (this.tails.get(runId) === tail) this.tails.delete(runId);
    });
    return next;
  }
}
