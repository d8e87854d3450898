/**
 * The media poller: claims `media_poll` jobs from the `render` queue (in-process by default; with
 * feature `workers`, worker processes serving `render` claim them and step each job through this
 * poller's `step`, behind their lease) and follows each platform task to its end with its own loop, not the
 * SDK's fixed wait: the delay starts at MEDIA_POLL_BASE_MS and grows 1.6x per poll up to
 * MEDIA_POLL_MAX_MS, with jitter (50-100 % of it); a 429 or 5xx is retried after the larger of
 * that delay and the platform's Retry-After (at most MAX_RETRIES in a row); a content-filter
 * failure is final. The lease is renewed while following. On success the outputs are downloaded
 * through the egress guard into the file store (the run's artifacts, `artifacts/<run>/media/...`)
 * before the platform's URLs expire. At start, the jobs a previous process left unfinished are
 * queued again (idempotent by job id) and followed anew.
 */
import { extname } from 'node:path';
import type { Logger } from 'pino';
import { ToolError, type NetPort, type PlatformTaskState } from '../../connectors/contract.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import { artifactId, artifactPath } from '../../runtime/files/artifacts.js';
import type { FileStore } from '../../runtime/files/store.js';
import type { JobQueue, Lease } from '../../runtime/jobs/queue.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import type { SourceDirectory } from '../sources/directory.js';
import type { MediaJobDoc, MediaJobOutput } from './documents.js';
import { isFinished, MEDIA_POLL_KIND, type MediaJobs } from './service.js';

/** consecutive retryable failures (429, 5xx, unreachable, an output download) before the job fails */
const MAX_RETRIES = 8;
/** the largest output copied (bytes) */
const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;
const POLLER_ID = 'media-poller';

export interface MediaPollerDeps {
  readonly jobs: MediaJobs;
  readonly queue: JobQueue;
  readonly plugins: PluginRegistry;
  readonly sources: SourceDirectory;
  readonly files: FileStore;
  /** the egress guard (platform calls and output downloads) */
  readonly net: NetPort;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly pollBaseMs: number;
  readonly pollMaxMs: number;
  readonly jobTimeoutMs: number;
  readonly leaseMs: number;
  /**
   * whether this process claims the `render` queue's `media_poll` jobs itself (the embedded default);
   * false with feature `workers`: worker processes serving `render` hold the leases and step the jobs
   * through `POST /workers/jobs/:id/media-poll`, and other kinds on `render` are theirs too
   */
  readonly claimsRender: boolean;
  /** the jitter's random source (tests may fix it) */
  readonly random?: () => number;
}

/** the delay before poll `n` (0-based): exponential, capped, with jitter */
export function pollDelay(n: number, baseMs: number, maxMs: number, random: () => number): number {
  const capped = Math.min(maxMs, baseMs * 1.6 ** Math.min(n, 60));
  return Math.round(capped * (0.5 + random() * 0.5));
}

/** where a followed job stands after a step, and how long to wait before the next one */
export interface MediaStep {
  /** the record says the job ended (or it is gone): nothing more to poll */
  readonly finished: boolean;
  readonly status: MediaJobDoc['status'] | 'missing';
  readonly delayMs: number;
  /** retryable failures in a row so far (the caller hands it to the next step) */
  readonly retries: number;
}

export class MediaPoller {
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly following = new Map<string, AbortController>();
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly deps: MediaPollerDeps) {
    deps.jobs.onCancel = (jobId) => this.following.get(jobId)?.abort();
    if (!deps.claimsRender) deps.jobs.onQueued = (org, jobId) => this.watch(org, jobId);
  }

  /**
   * With worker processes following the jobs: a job the queue settled while its record is still
   * unfinished (its deliveries ran out, or a worker completed it without the end being written) is
   * followed here, without a lease, so no record stays `running` until the next start.
   */
  private watch(org: OrgId, jobId: string): void {
    this.deps.queue.settled(jobId).then(
      async (info) => {
        if (this.stopped) return;
        const job = await this.deps.jobs.find(org, jobId);
        if (!job || isFinished(job.status)) return;
        this.deps.logger.warn({ job_id: jobId, state: info.state, error: info.error }, 'media job: the queue settled it unfinished; followed in the gateway');
        this.spawn(org, jobId, null);
      },
      () => undefined, // the queue closed: the next start picks the job up
    );
  }

  /** queues the unfinished jobs again and starts claiming */
  async start(): Promise<void> {
    for (const job of await this.deps.jobs.unfinished()) {
      const info = await this.deps.queue.get(job.id);
      // the queue already settled it (its end was not written): follow it without a lease
      if (info && (info.state === 'done' || info.state === 'dead')) this.spawn(job.org_id, job.id, null);
      else await this.deps.jobs.enqueue(job.org_id, job.id);
    }
    if (this.deps.claimsRender) this.loop = this.claimLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    for (const controller of this.following.values()) controller.abort();
    await this.loop;
    // each follower gives its lease back before the queue closes
    await Promise.all([...this.running]);
  }

  private async claimLoop(): Promise<void> {
    // stop() does not wait out a long-poll: its wait runs on the runtime clock, which a simulated clock may never advance
    const stopped = new Promise<Lease[]>((resolve) => this.stopping.signal.addEventListener('abort', () => resolve([]), { once: true }));
    while (!this.stopped) {
      try {
        const leases = await Promise.race([this.deps.queue.claim(POLLER_ID, ['render'], { max: 16, waitMs: 500 }), stopped]);
        for (const lease of leases) {
          if (lease.job.kind === MEDIA_POLL_KIND) this.spawn(lease.job.orgId as OrgId, String(lease.job.payload['job_id']), lease);
          // without feature workers nothing else is queued on `render`; a stray job is not held leased
          else await this.deps.queue.fail(lease.job.id, lease.fence, `no handler for "${lease.job.kind}" without worker processes`).catch(() => undefined);
        }
      } catch (error) {
        if (this.stopped) return;
        this.deps.logger.error({ err: error }, 'media poller: claiming from the render queue failed');
        await this.sleep(1000, this.stopping.signal);
      }
    }
  }

  private spawn(org: OrgId, jobId: string, lease: Lease | null): void {
    if (this.following.has(jobId)) return;
    const controller = new AbortController();
    this.following.set(jobId, controller);
    const followed = this.follow(org, jobId, lease, controller.signal)
      .catch((error: unknown) => this.deps.logger.error({ err: error, job_id: jobId }, 'media poller: following a job failed'))
      .finally(() => {
        this.following.delete(jobId);
        this.running.delete(followed);
      });
    this.running.add(followed);
  }

  private async follow(org: OrgId, jobId: string, lease: Lease | null, signal: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    let fence = lease?.fence ?? null;
    let renewedAt = clock.now();
    let next = await this.peek(org, jobId);
    while (!next.finished) {
      await this.sleep(next.delayMs, signal);
      if (signal.aborted) break;
      next = await this.step(org, jobId, next.retries, signal);
      if (signal.aborted) break;
      if (fence !== null && clock.now() - renewedAt > this.deps.leaseMs / 3) {
        try {
          fence = (await this.deps.queue.renew(jobId, fence)).fence;
          renewedAt = clock.now();
        } catch {
          return; // the lease went to another delivery: that one follows the job
        }
      }
    }
    // settled, or stopped with the job unfinished: the queue's delivery ends here either way; a job the record
    // still shows unfinished is followed again at the next start (`start()`), without a lease when the queue has it done
    if (fence !== null) await this.deps.queue.complete(jobId, fence, { status: next.status }).catch(() => undefined);
  }

  /** where a job stands without polling it: the wait before its next poll (the first poll waits too: the task was just created, or the previous process polled it last) */
  async peek(org: OrgId, jobId: string): Promise<MediaStep> {
    const job = await this.deps.jobs.find(org, jobId);
    return this.stepOf(job, 0);
  }

  /**
   * One poll of the platform and what it means for the record: the job's timeout, a retryable failure
   * (429, 5xx, unreachable: `retries` in a row, at most MAX_RETRIES, backing off at least what
   * Retry-After asks), a final one, progress, or the end (outputs copied first). The in-process loop and
   * a worker holding the job's lease (`POST /workers/jobs/:id/media-poll`) both go step by step.
   */
  async step(org: OrgId, jobId: string, retries: number, signal: AbortSignal): Promise<MediaStep> {
    const { jobs, clock } = this.deps;
    let job = await jobs.find(org, jobId);
    if (!job || isFinished(job.status)) return this.stepOf(job, retries);
    if (clock.now() - Date.parse(job.created_at) > this.deps.jobTimeoutMs) {
      job = await this.fail(org, job, 'timeout', `the generation did not finish within ${Math.round(this.deps.jobTimeoutMs / 1000)} s`);
      await this.cancelTaskOf(org, job).catch(() => undefined);
      return this.stepOf(job, retries);
    }
    try {
      const state = await this.poll(org, job, signal);
      return this.stepOf(await this.advance(org, job, state, signal), 0);
    } catch (error) {
      if (signal.aborted) return this.stepOf(job, retries);
      const failure = ToolError.within(error);
      const retryable = failure !== null && failure.details?.['retryable'] === true;
      if (!retryable || retries + 1 > MAX_RETRIES) {
        return this.stepOf(await this.fail(org, job, failure?.code ?? 'internal_error', failure?.message ?? 'the job could not be followed'), retries + 1);
      }
      // 429 and 5xx: back off by the failures in a row, at least what Retry-After asks
      const retryAfter = Number(failure.details?.['retry_after_s'] ?? 0) * 1000;
      const backoff = this.delay(retries + 1);
      job = await jobs.update(org, job, { polls: job.polls + 1 });
      return { ...this.stepOf(job, retries + 1), delayMs: Math.max(backoff, Number.isFinite(retryAfter) ? retryAfter : 0) };
    }
  }

  private stepOf(job: MediaJobDoc | null, retries: number): MediaStep {
    if (!job) return { finished: true, status: 'missing', delayMs: 0, retries };
    return { finished: isFinished(job.status), status: job.status, delayMs: this.delay(job.polls), retries };
  }

  private delay(n: number): number {
    return pollDelay(n, this.deps.pollBaseMs, this.deps.pollMaxMs, this.deps.random ?? Math.random);
  }

  /** one poll, and what it means for the record */
  private async advance(org: OrgId, job: MediaJobDoc, state: PlatformTaskState, signal: AbortSignal): Promise<MediaJobDoc> {
    const { jobs } = this.deps;
    if (state.status === 'failed') {
      return this.fail(org, job, state.failure?.code ?? 'generation_failed', state.failure?.message ?? 'the generation failed');
    }
    if (state.status === 'cancelled')
      return jobs.settle(org, job, { status: 'cancelled', error: { code: 'cancelled', message: 'the task was cancelled on the platform' } });
    if (state.status === 'succeeded') {
      // copied before the job says succeeded: the URLs expire, the files do not
      const outputs = await this.copyOutputs(org, job, state.outputs, signal);
      return jobs.settle(org, job, { status: 'succeeded', outputs, polls: job.polls + 1 });
    }
    return jobs.update(org, job, { status: state.status, progress: state.progress, polls: job.polls + 1 });
  }

  private fail(org: OrgId, job: MediaJobDoc, code: string, message: string): Promise<MediaJobDoc> {
    return this.deps.jobs.settle(org, job, { status: 'failed', error: { code, message } });
  }

  private async source(org: OrgId, job: MediaJobDoc): Promise<{ config: Record<string, unknown>; plugin: NonNullable<ReturnType<PluginRegistry['plugin']>> }> {
    const plugin = this.deps.plugins.plugin(job.connector);
    const [source] = await this.deps.sources.catalogSources(org, [job.source_id]);
    if (!plugin?.plugin.jobs || !source) {
      throw new ToolError('source_unavailable', `the source ${job.source_id} that started the job is gone or no longer valid`);
    }
    return { config: source.config, plugin };
  }

  private async poll(org: OrgId, job: MediaJobDoc, signal: AbortSignal): Promise<PlatformTaskState> {
    const { config, plugin } = await this.source(org, job);
    // one signal per call: the SDK leaves its listeners on the signal it gets, and a job is polled many times
    const call = new AbortController();
    const abort = (): void => call.abort(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    try {
      return await (plugin.plugin.jobs as NonNullable<typeof plugin.plugin.jobs>).poll(config, job.task_id, call.signal, this.deps.net);
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  /** the platform's cancel (`DELETE /v1/tasks/:id` for Runway) */
  async cancelTaskOf(org: OrgId, job: MediaJobDoc): Promise<void> {
    const { config, plugin } = await this.source(org, job);
    await (plugin.plugin.jobs as NonNullable<typeof plugin.plugin.jobs>).cancel(config, job.task_id, AbortSignal.timeout(30_000), this.deps.net);
  }

  private async copyOutputs(org: OrgId, job: MediaJobDoc, urls: readonly string[], signal: AbortSignal): Promise<MediaJobOutput[]> {
    const outputs: MediaJobOutput[] = [];
    for (const [index, url] of urls.entries()) {
      const response = await this.deps.net.fetch(url, { signal }).catch((error: unknown) => {
        throw ToolError.within(error) ?? new ToolError('upstream_unreachable', `the output ${index + 1} cannot be downloaded`, { retryable: true });
      });
      if (!response.ok || response.body === null) {
        throw new ToolError('upstream_error', `the output ${index + 1} answered ${response.status}`, { retryable: true, status: response.status });
      }
      const extension = (extname(new URL(url).pathname) || extensionOf(response.headers.get('content-type'))).slice(0, 10);
      const name = `media/${job.id}-${index + 1}${extension}`;
      const path = job.run_id === null ? name : artifactPath(job.run_id, name);
      const written = await this.deps.files.write(org, path, bounded(response.body as AsyncIterable<Uint8Array>, MAX_OUTPUT_BYTES));
      outputs.push({
        path: written.path,
        artifact_id: job.run_id === null ? null : artifactId({ runId: job.run_id, name }),
        content_type: written.content_type,
        size: written.size,
      });
    }
    return outputs;
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = this.deps.clock.setTimeout(() => {
        signal.removeEventListener('abort', done);
        resolve();
      }, ms);
      const done = (): void => {
        this.deps.clock.clearTimeout(timer);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

const extensionOf = (contentType: string | null): string =>
  ({ 'video/mp4': '.mp4', 'image/png': '.png', 'image/jpeg': '.jpg', 'image/webp': '.webp' })[(contentType ?? '').split(';')[0]?.trim() ?? ''] ?? '.bin';

async function* bounded(body: AsyncIterable<Uint8Array>, limit: number): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > limit) throw new ToolError('output_too_large', `an output is larger than ${limit} bytes`);
    yield chunk;
  }
}
