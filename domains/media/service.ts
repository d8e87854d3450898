/**
 * Media jobs: the durable record of every task a media tool started on a media-generation
 * platform (`media_jobs`), what the `media` port and `/media/jobs` do with them, and the waits of
 * runs on them. The polling itself is domains/media/poller.ts, on the `render` queue.
 *
 * A job moves queued -> running -> succeeded | failed | cancelled; each change of status or
 * progress is written to the record and, when the job belongs to a live agent run, appended to the
 * run's transcript as `media_progress` (streamed by chat SSE).
 */
import type { Logger } from 'pino';
import type { MediaJobView } from '../../connectors/contract.js';
import { ToolError } from '../../connectors/contract.js';
import type { RunFeed } from '../../runtime/agent/run-feed.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { isoAt } from '../../runtime/clock.js';
import { conflict, ServiceError } from '../../runtime/errors.js';
import type { JobQueue } from '../../runtime/jobs/queue.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { Collections } from '../collections.js';
import { UNFINISHED, viewOf, type MediaJobDoc, type MediaJobStatus } from './documents.js';

/** the job-queue kind of a media job's poll (queue `render`) */
export const MEDIA_POLL_KIND = 'media_poll';

export interface MediaJobsDeps {
  readonly collections: Pick<Collections, 'mediaJobs'>;
  readonly queue: JobQueue;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  /** the transcript of a live (or parked) run, where progress is appended */
  readonly feedOf: (runId: string) => RunFeed | undefined;
}

export interface TrackInput {
  readonly realm: string;
  readonly runId: string | null;
  readonly sourceId: string;
  readonly connector: string;
  readonly tool: string;
  readonly taskId: string;
  readonly cost: number | null;
  readonly request: Record<string, unknown>;
  readonly createdBy: string | null;
}

type Patch = Partial<Pick<MediaJobDoc, 'status' | 'progress' | 'outputs' | 'error' | 'polls' | 'finished_at'>>;

export const isFinished = (status: MediaJobStatus): boolean => !UNFINISHED.includes(status);

export class MediaJobs {
  private readonly waiters = new Map<string, Set<(job: MediaJobDoc) => void>>();
  /** aborted when the service stops: waiting runs get `interrupted` at once instead of holding the shutdown */
  private readonly stopping = new AbortController();
  /** called when a job is cancelled: the poller stops following it */
  onCancel: (jobId: string) => void = () => undefined;
  /** called when a job's poll is queued: with worker processes following it, the poller watches how the queue settles it */
  onQueued: (org: OrgId, jobId: string) => void = () => undefined;
  /** called with every job's end: the run waiting on it is answered (run-waits.ts) */
  onSettled: (org: OrgId, job: MediaJobDoc) => void = () => undefined;
  /** hands a run's tool call over to the end of its jobs (run-waits.ts); false: the tool waits itself (`wait`) */
  handOver: (org: OrgId, runId: string, jobIds: readonly string[]) => boolean = () => false;

  constructor(private readonly deps: MediaJobsDeps) {}

  get listing(): Pick<Collections['mediaJobs'], 'list' | 'revision'> {
    return this.deps.collections.mediaJobs;
  }

  /** records a started task and queues its poll on `render` */
  async track(org: OrgId, input: TrackInput): Promise<MediaJobDoc> {
    const doc = await this.deps.collections.mediaJobs.insert(org, {
      realm: input.realm,
      run_id: input.runId,
      source_id: input.sourceId,
      connector: input.connector,
      tool: input.tool,
      task_id: input.taskId,
      status: 'queued',
      progress: 0,
      cost: input.cost,
      outputs: [],
      error: null,
      request: input.request,
      polls: 0,
      created_by: input.createdBy,
      finished_at: null,
    });
    this.publish(org, doc);
    await this.enqueue(org, doc.id);
    return doc;
  }

  async enqueue(org: OrgId, jobId: string): Promise<void> {
    await this.deps.queue.enqueue({ id: jobId, queue: 'render', orgId: org, kind: MEDIA_POLL_KIND, payload: { job_id: jobId } });
    this.onQueued(org, jobId);
  }

  /** one of the organization's jobs; another organization's id is 404 */
  async get(org: OrgId, id: string): Promise<MediaJobDoc> {
    const doc = await this.deps.collections.mediaJobs.get(org, id);
    if (!doc) throw new ServiceError('not_found', `no media job ${id}`);
    return doc;
  }

  async find(org: OrgId, id: string): Promise<MediaJobDoc | null> {
    return this.deps.collections.mediaJobs.get(org, id);
  }

  /** the jobs a previous process left unfinished, across organizations (picked up again at start) */
  unfinished(): Promise<(MediaJobDoc & { readonly org_id: OrgId })[]> {
    return this.deps.collections.mediaJobs.findAcrossOrgs({ status: { in: [...UNFINISHED] } }, Number.MAX_SAFE_INTEGER);
  }

  /**
   * Cancels an unfinished job: the record first (so the poller and the waiting run see it at
   * once), then the platform's task through `cancelTask`. 409 `conflict` when already finished.
   */
  async cancel(org: OrgId, id: string, cancelTask: (job: MediaJobDoc) => Promise<void>): Promise<MediaJobDoc> {
    const job = await this.get(org, id);
    if (isFinished(job.status)) throw conflict(`media job ${id} is already ${job.status}`, { status: job.status });
    const cancelled = await this.settle(org, job, { status: 'cancelled', error: { code: 'cancelled', message: 'the job was cancelled' } });
    this.onCancel(id);
    try {
      await cancelTask(job);
    } catch (error) {
      // the record says cancelled either way; the platform may have finished it meanwhile
      this.deps.logger.warn({ err: error, job_id: id }, 'media job: the platform did not confirm the cancel');
    }
    return cancelled;
  }

  /** a change while the job runs (status, progress, polls); a finished job is left as it is */
  async update(org: OrgId, job: MediaJobDoc, patch: Patch): Promise<MediaJobDoc> {
    const current = await this.deps.collections.mediaJobs.get(org, job.id);
    if (!current || isFinished(current.status)) return current ?? job;
    const updated = (await this.deps.collections.mediaJobs.update(org, job.id, patch)) ?? current;
    if (updated.status !== current.status || updated.progress !== current.progress) this.publish(org, updated);
    return updated;
  }

  /** the job's end: written once (a job already finished stays as it was), waiters answered */
  async settle(org: OrgId, job: MediaJobDoc, patch: Patch & { readonly status: MediaJobStatus }): Promise<MediaJobDoc> {
    const current = await this.deps.collections.mediaJobs.get(org, job.id);
    if (!current || isFinished(current.status)) return current ?? job;
    const finished =
      (await this.deps.collections.mediaJobs.update(org, job.id, {
        ...patch,
        progress: patch.status === 'succeeded' ? 1 : current.progress,
        finished_at: isoAt(this.deps.clock.now()),
      })) ?? current;
    this.publish(org, finished);
    for (const resolve of this.waiters.get(job.id) ?? []) resolve(finished);
    this.waiters.delete(job.id);
    this.onSettled(org, finished);
    return finished;
  }

  /** resolves when the job is finished; `signal` aborting ends the wait (ToolError `cancelled`), not the job */
  async wait(org: OrgId, id: string, signal: AbortSignal): Promise<MediaJobView> {
    signal.throwIfAborted();
    let resolveWait: (job: MediaJobDoc) => void = () => undefined;
    const settled = new Promise<MediaJobDoc>((resolve) => (resolveWait = resolve));
    const set = this.waiters.get(id) ?? new Set();
    set.add(resolveWait);
    this.waiters.set(id, set);
    const abort = (): void => {
      set.delete(resolveWait);
    };
    try {
      // finished before the wait began
      const current = await this.get(org, id);
      if (isFinished(current.status)) return viewOf(current);
      const aborted = new Promise<never>((_resolve, reject) => {
        const onAbort = (): void => reject(new ToolError('cancelled', 'the run stopped waiting for the media job; the job goes on', { job_id: id }));
        const onStop = (): void =>
          reject(
            new ToolError('interrupted', 'the service stopped while the run waited; the media job goes on: check it with media_job_status', { job_id: id }),
          );
        if (signal.aborted) onAbort();
        if (this.stopping.signal.aborted) onStop();
        signal.addEventListener('abort', onAbort, { once: true });
        this.stopping.signal.addEventListener('abort', onStop, { once: true });
        void settled.finally(() => {
          signal.removeEventListener('abort', onAbort);
          this.stopping.signal.removeEventListener('abort', onStop);
        });
      });
      return viewOf(await Promise.race([settled, aborted]));
    } finally {
      abort();
    }
  }

  /** At shutdown, before the runs are asked to stop: the waits end (`interrupted`), the jobs go on after the restart. */
  release(): void {
    this.stopping.abort();
  }

  /** `media_progress` in the run's transcript, when the run is live */
  private publish(org: OrgId, job: MediaJobDoc): void {
    if (job.run_id === null) return;
    const feed = this.deps.feedOf(job.run_id);
    if (!feed || feed.ended || feed.orgId !== org) return;
    feed.append('media_progress', {
      job_id: job.id,
      status: job.status,
      progress: job.progress,
      ...(job.status === 'succeeded' ? { outputs: job.outputs } : {}),
      ...(job.error ? { error: job.error } : {}),
    });
  }
}
