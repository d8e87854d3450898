/**
 * The gateway side of workers: the registry of worker processes (in memory:
 * a worker re-registers after a gateway restart), the job queue they reach
 * over HTTP, and what a job's completion applies (once, behind its fence).
 */
import { ulid } from 'ulid';
import type { RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import type { JobInfo, JobQueue, JobSpec, Lease, QueueName, QueueStats } from '../../runtime/jobs/queue.js';

export interface WorkerRecord {
  readonly id: string;
  readonly name: string | null;
  readonly queues: readonly QueueName[];
  readonly slots: number;
  readonly registeredAt: number;
  lastHeartbeat: number;
}

/** what a completed job of a kind applies on the gateway (runs once: only the current fence completes) */
export type JobEffect = (job: JobInfo) => Promise<void>;

export interface WorkerStatus {
  readonly workers: readonly (WorkerRecord & { readonly alive: boolean })[];
  readonly queues: Record<QueueName, QueueStats>;
}

/** the longest a claim may hold the request open */
export const MAX_CLAIM_WAIT_MS = 30_000;
/** a claim's wait is cut in steps this long, so a worker that went away stops claiming */
const CLAIM_STEP_MS = 1_000;

export class WorkerService {
  private readonly workers = new Map<string, WorkerRecord>();
  private readonly effects = new Map<string, JobEffect>();

  constructor(
    readonly queue: JobQueue,
    private readonly clock: RuntimeClock,
    /** `WORKER_LEASE_TTL` in ms: a worker is alive while its last heartbeat is younger */
    readonly leaseMs: number,
  ) {}

  /** registers what completing a job of `kind` applies */
  onComplete(kind: string, effect: JobEffect): void {
    this.effects.set(kind, effect);
  }

  register(input: { readonly name?: string | null; readonly queues: readonly QueueName[]; readonly slots: number }): WorkerRecord {
    this.forgetDead();
    const now = this.clock.now();
    const worker: WorkerRecord = {
      id: `wrk_${ulid(now)}`,
      name: input.name ?? null,
      queues: [...new Set(input.queues)],
      slots: input.slots,
      registeredAt: now,
      lastHeartbeat: now,
    };
    this.workers.set(worker.id, worker);
    return worker;
  }

  heartbeat(workerId: string): WorkerRecord {
    const worker = this.workers.get(workerId);
    if (!worker) throw new ServiceError('not_found', `no worker ${workerId}; register again`);
    worker.lastHeartbeat = this.clock.now();
    return worker;
  }

  /**
   * Leases up to `max` (at most the worker's slots) jobs, waiting at most
   * `waitMs`. The wait goes in short steps so a worker that went away (its
   * request aborted: `gone()`) stops claiming; jobs leased just as it went are
   * given back at once (`fail`, counted as a delivery) instead of waiting out a lease.
   */
  async claim(workerId: string, max: number, waitMs: number, gone: () => boolean = () => false): Promise<Lease[]> {
    const worker = this.heartbeat(workerId);
    const deadline = this.clock.now() + Math.min(waitMs, MAX_CLAIM_WAIT_MS);
    for (;;) {
      const step = Math.max(0, Math.min(CLAIM_STEP_MS, deadline - this.clock.now()));
      const leases = await this.queue.claim(worker.id, worker.queues, { max: Math.min(max, worker.slots), waitMs: step });
      if (gone()) {
        await Promise.all(
          leases.map((lease) => this.queue.fail(lease.job.id, lease.fence, 'the worker went away before its claim was answered').catch(() => undefined)),
        );
        return [];
      }
      if (leases.length > 0 || this.clock.now() >= deadline) return leases;
    }
  }

  renew(jobId: string, fence: string): Promise<Lease> {
    return this.queue.renew(jobId, fence);
  }

  /** records the result, then applies the kind's effect: a stale fence throws `lease_lost` before anything applies */
  async complete(jobId: string, fence: string, result: Record<string, unknown>): Promise<JobInfo> {
    const info = await this.queue.complete(jobId, fence, result);
    await this.effects.get(info.kind)?.(info);
    return info;
  }

  fail(jobId: string, fence: string, error: string): Promise<JobInfo> {
    return this.queue.fail(jobId, fence, error);
  }

  /** the job when `fence` is its live lease (for routes a worker calls mid-job); `lease_lost` otherwise */
  async requireLease(jobId: string, fence: string): Promise<JobInfo> {
    await this.queue.renew(jobId, fence);
    const info = await this.queue.get(jobId);
    if (!info) throw new ServiceError('not_found', `no job ${jobId}`);
    return info;
  }

  alive(worker: WorkerRecord): boolean {
    return this.clock.now() - worker.lastHeartbeat < this.leaseMs;
  }

  /** whether a live worker serves `queue` */
  hasWorkerFor(queue: QueueName): boolean {
    return [...this.workers.values()].some((worker) => worker.queues.includes(queue) && this.alive(worker));
  }

  /** 503 `worker_unavailable` unless a live worker serves `queue` (a manual run asks before it creates anything) */
  requireWorkerFor(queue: QueueName): void {
    if (!this.hasWorkerFor(queue)) {
      throw new ServiceError('worker_unavailable', `no live worker serves the "${queue}" queue`, { queue });
    }
  }

  /** enqueues when a live worker serves the queue; 503 `worker_unavailable` otherwise */
  async enqueueForWorker(spec: JobSpec): Promise<JobInfo> {
    this.requireWorkerFor(spec.queue);
    return this.queue.enqueue(spec);
  }

  async status(): Promise<WorkerStatus> {
    this.forgetDead();
    const workers = [...this.workers.values()].map((worker) => ({ ...worker, alive: this.alive(worker) }));
    return { workers, queues: await this.queue.stats() };
  }

  /** workers silent for ten leases are dropped from the registry */
  private forgetDead(): void {
    const cutoff = this.clock.now() - 10 * this.leaseMs;
    for (const [id, worker] of this.workers) if (worker.lastHeartbeat < cutoff) this.workers.delete(id);
  }
}
