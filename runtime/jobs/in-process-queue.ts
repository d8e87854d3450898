/**
 * The embedded job queue: the `JobQueue` contract in this process's memory,
 * so `npm start` needs no server. Lease expiry runs on the injected clock's
 * timers (tests move XState's simulated clock instead of sleeping); the fence
 * is a counter, strictly larger for every delivery of any job.
 *
 * What it does not do: survive a restart (jobs live in memory) or share work
 * with another process; `NATS_URL` selects JetStream for that.
 */
import type { RuntimeClock } from '../clock.js';
import { ServiceError } from '../errors.js';
import {
  DEFAULT_SETTLED_KEEP_MS,
  QUEUE_NAMES,
  sweepInterval,
  type JobInfo,
  type JobQueue,
  type JobQueueOptions,
  type JobSpec,
  type Lease,
  type QueueName,
  type QueueStats,
  type SweepReport,
} from './queue.js';

interface Job {
  readonly spec: JobSpec;
  state: JobInfo['state'];
  deliveries: number;
  readonly enqueuedAt: number;
  result: Record<string, unknown> | null;
  error: string | null;
  /** the current delivery's fence and lease, while `leased` */
  fence: number;
  workerId: string;
  expiresAt: number;
  timer: unknown;
  /** when it became done or dead (the keep period counts from here) */
  settledAt: number;
}

interface ClaimWaiter {
  readonly queues: readonly QueueName[];
  readonly wake: () => void;
}

/** settled jobs (done or dead) kept for idempotency and `get` before the oldest are forgotten */
const DEFAULT_SETTLED_KEPT = 100_000;
/** the most jobs one claim leases */
const MAX_CLAIM = 100;

interface InProcessQueueOptions extends JobQueueOptions {
  readonly settledKept?: number;
}

export class InProcessJobQueue implements JobQueue {
  readonly #clock: RuntimeClock;
  readonly #leaseMs: number;
  readonly #maxDeliver: number;
  readonly #settledKept: number;
  readonly #settledKeepMs: number;
  readonly #sweepMs: number;
  #sweepTimer: unknown = undefined;
  readonly #jobs = new Map<string, Job>();
  /** pending job ids per queue, in delivery order */
  readonly #pending = new Map<QueueName, Set<string>>(QUEUE_NAMES.map((q) => [q, new Set<string>()]));
  readonly #redelivered = new Map<QueueName, number>(QUEUE_NAMES.map((q) => [q, 0]));
  /** dead job ids per queue, oldest first */
  readonly #dead = new Map<QueueName, string[]>(QUEUE_NAMES.map((q) => [q, []]));
  /** settled job ids, oldest first (the forgetting order) */
  readonly #settledOrder: string[] = [];
  readonly #settledWaiters = new Map<string, Array<{ resolve: (info: JobInfo) => void; reject: (e: Error) => void }>>();
  readonly #claimWaiters = new Set<ClaimWaiter>();
  #fences = 0;
  #closed = false;

  constructor(clock: RuntimeClock, options: InProcessQueueOptions) {
    this.#clock = clock;
    this.#leaseMs = options.leaseMs;
    this.#maxDeliver = Math.max(1, options.maxDeliver);
    this.#settledKept = options.settledKept ?? DEFAULT_SETTLED_KEPT;
    this.#settledKeepMs = options.settledKeepMs ?? DEFAULT_SETTLED_KEEP_MS;
    this.#sweepMs = sweepInterval(options);
    this.#scheduleSweep();
  }

  #scheduleSweep(): void {
    this.#sweepTimer = this.#clock.setTimeout(() => {
      if (this.#closed) return;
      void this.sweep().finally(() => this.#scheduleSweep());
    }, this.#sweepMs);
  }

  /** forgets settled jobs past the keep period (nothing is ever lost in transit here) */
  async sweep(): Promise<SweepReport> {
    const cutoff = this.#clock.now() - this.#settledKeepMs;
    let forgotten = 0;
    while (this.#settledOrder.length > 0) {
      const job = this.#jobs.get(this.#settledOrder[0] ?? '');
      if (job && job.settledAt > cutoff) break;
      this.#settledOrder.shift();
      if (job) {
        this.#drop(job);
        forgotten += 1;
      }
    }
    return { republished: 0, refreshed: 0, forgotten };
  }

  async enqueue(spec: JobSpec): Promise<JobInfo> {
    this.#open();
    const existing = this.#jobs.get(spec.id);
    if (existing) return info(existing);
    const job: Job = {
      spec: { id: spec.id, queue: spec.queue, orgId: spec.orgId, kind: spec.kind, payload: structuredClone(spec.payload) },
      state: 'pending',
      deliveries: 0,
      enqueuedAt: this.#clock.now(),
      result: null,
      error: null,
      fence: 0,
      workerId: '',
      expiresAt: 0,
      timer: undefined,
      settledAt: 0,
    };
    this.#jobs.set(spec.id, job);
    this.#makePending(job);
    return info(job);
  }

  async claim(workerId: string, queues: readonly QueueName[], options: { readonly max?: number; readonly waitMs?: number } = {}): Promise<Lease[]> {
    this.#open();
    const max = Math.min(MAX_CLAIM, Math.max(1, options.max ?? 1));
    const leases = this.#take(workerId, queues, max);
    const waitMs = options.waitMs ?? 0;
    if (leases.length > 0 || waitMs <= 0) return leases;
    return new Promise<Lease[]>((resolve) => {
      const waiter: ClaimWaiter = {
        queues,
        wake: () => {
          if (this.#closed) return finish([]);
          const taken = this.#take(workerId, queues, max);
          if (taken.length > 0) finish(taken);
        },
      };
      const timer = this.#clock.setTimeout(() => finish([]), waitMs);
      const finish = (result: Lease[]) => {
        this.#clock.clearTimeout(timer);
        this.#claimWaiters.delete(waiter);
        resolve(result);
      };
      this.#claimWaiters.add(waiter);
    });
  }

  async renew(jobId: string, fence: string): Promise<Lease> {
    this.#open();
    const job = this.#current(jobId, fence);
    this.#lease(job);
    return leaseOf(job);
  }

  async complete(jobId: string, fence: string, result: Record<string, unknown>): Promise<JobInfo> {
    this.#open();
    const job = this.#current(jobId, fence);
    this.#clock.clearTimeout(job.timer);
    job.result = structuredClone(result);
    this.#settle(job, 'done');
    return info(job);
  }

  async fail(jobId: string, fence: string, error: string): Promise<JobInfo> {
    this.#open();
    const job = this.#current(jobId, fence);
    this.#clock.clearTimeout(job.timer);
    job.error = error;
    if (job.deliveries >= this.#maxDeliver) this.#settle(job, 'dead');
    else this.#makePending(job);
    return info(job);
  }

  async get(jobId: string): Promise<JobInfo | null> {
    const job = this.#jobs.get(jobId);
    return job ? info(job) : null;
  }

  async stats(): Promise<Record<QueueName, QueueStats>> {
    const now = this.#clock.now();
    const inflight = new Map<QueueName, number>(QUEUE_NAMES.map((q) => [q, 0]));
    for (const job of this.#jobs.values()) {
      if (job.state === 'leased') inflight.set(job.spec.queue, (inflight.get(job.spec.queue) ?? 0) + 1);
    }
    const entries = QUEUE_NAMES.map((q): [QueueName, QueueStats] => {
      const pending = this.#pending.get(q) ?? new Set<string>();
      let oldest: number | null = null;
      for (const id of pending) {
        const at = this.#jobs.get(id)?.enqueuedAt;
        if (at !== undefined && (oldest === null || at < oldest)) oldest = at;
      }
      return [
        q,
        {
          depth: pending.size,
          inflight: inflight.get(q) ?? 0,
          oldestPendingS: oldest === null ? null : Math.max(0, Math.floor((now - oldest) / 1000)),
          redelivered: this.#redelivered.get(q) ?? 0,
          deadLetters: this.#dead.get(q)?.length ?? 0,
        },
      ];
    });
    return Object.fromEntries(entries) as Record<QueueName, QueueStats>;
  }

  async deadLetters(queue: QueueName, limit = 50): Promise<JobInfo[]> {
    const ids = this.#dead.get(queue) ?? [];
    const out: JobInfo[] = [];
    for (let i = ids.length - 1; i >= 0 && out.length < limit; i -= 1) {
      const job = this.#jobs.get(ids[i] ?? '');
      if (job) out.push(info(job));
    }
    return out;
  }

  settled(jobId: string): Promise<JobInfo> {
    const job = this.#jobs.get(jobId);
    if (!job) return Promise.reject(new ServiceError('not_found', `no job ${jobId}`, { job_id: jobId }));
    if (job.state === 'done' || job.state === 'dead') return Promise.resolve(info(job));
    if (this.#closed) return Promise.reject(closedError());
    return new Promise<JobInfo>((resolve, reject) => {
      const list = this.#settledWaiters.get(jobId) ?? [];
      list.push({ resolve, reject });
      this.#settledWaiters.set(jobId, list);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.clearTimeout(this.#sweepTimer);
    for (const job of this.#jobs.values()) if (job.state === 'leased') this.#clock.clearTimeout(job.timer);
    for (const waiter of [...this.#claimWaiters]) waiter.wake();
    for (const list of this.#settledWaiters.values()) for (const w of list) w.reject(closedError());
    this.#settledWaiters.clear();
  }

  #open(): void {
    if (this.#closed) throw closedError();
  }

  /** the job whose current delivery has this fence, or `lease_lost` */
  #current(jobId: string, fence: string): Job {
    const job = this.#jobs.get(jobId);
    if (!job) throw new ServiceError('not_found', `no job ${jobId}`, { job_id: jobId });
    if (job.state !== 'leased' || String(job.fence) !== fence) {
      throw new ServiceError('lease_lost', `job ${jobId}: fence ${fence} is not the current delivery`, { job_id: jobId, fence, state: job.state });
    }
    return job;
  }

  #take(workerId: string, queues: readonly QueueName[], max: number): Lease[] {
    const leases: Lease[] = [];
    for (const queue of queues) {
      const pending = this.#pending.get(queue);
      if (!pending) continue;
      for (const id of pending) {
        if (leases.length >= max) return leases;
        pending.delete(id);
        const job = this.#jobs.get(id);
        if (!job) continue;
        job.deliveries += 1;
        if (job.deliveries > 1) this.#redelivered.set(queue, (this.#redelivered.get(queue) ?? 0) + 1);
        this.#fences += 1;
        job.fence = this.#fences;
        job.workerId = workerId;
        job.state = 'leased';
        this.#lease(job);
        leases.push(leaseOf(job));
      }
    }
    return leases;
  }

  /** (re)start the lease timer of the current delivery */
  #lease(job: Job): void {
    this.#clock.clearTimeout(job.timer);
    job.expiresAt = this.#clock.now() + this.#leaseMs;
    const fence = job.fence;
    job.timer = this.#clock.setTimeout(() => this.#lapse(job, fence), this.#leaseMs);
  }

  #lapse(job: Job, fence: number): void {
    if (this.#closed || job.state !== 'leased' || job.fence !== fence) return;
    job.error = `lease lapsed (delivery ${job.deliveries} to ${job.workerId})`;
    if (job.deliveries >= this.#maxDeliver) this.#settle(job, 'dead');
    else this.#makePending(job);
  }

  #makePending(job: Job): void {
    job.state = 'pending';
    job.timer = undefined;
    this.#pending.get(job.spec.queue)?.add(job.spec.id);
    for (const waiter of [...this.#claimWaiters]) {
      if (job.state !== 'pending') break;
      if (waiter.queues.includes(job.spec.queue)) waiter.wake();
    }
  }

  #settle(job: Job, state: 'done' | 'dead'): void {
    job.state = state;
    job.timer = undefined;
    job.settledAt = this.#clock.now();
    if (state === 'dead') this.#dead.get(job.spec.queue)?.push(job.spec.id);
    this.#settledOrder.push(job.spec.id);
    const waiters = this.#settledWaiters.get(job.spec.id) ?? [];
    this.#settledWaiters.delete(job.spec.id);
    for (const w of waiters) w.resolve(info(job));
    this.#forget();
  }

  /** drop the oldest settled jobs past the kept bound */
  #forget(): void {
    while (this.#settledOrder.length > this.#settledKept) {
      const id = this.#settledOrder.shift();
      const job = id === undefined ? undefined : this.#jobs.get(id);
      if (job) this.#drop(job);
    }
  }

  #drop(job: Job): void {
    this.#jobs.delete(job.spec.id);
    if (job.state === 'dead') {
      const dead = this.#dead.get(job.spec.queue) ?? [];
      const at = dead.indexOf(job.spec.id);
      if (at >= 0) dead.splice(at, 1);
    }
  }
}

function info(job: Job): JobInfo {
  return {
    ...job.spec,
    payload: structuredClone(job.spec.payload),
    state: job.state,
    deliveries: job.deliveries,
    enqueuedAt: job.enqueuedAt,
    result: job.result === null ? null : structuredClone(job.result),
    error: job.error,
  };
}

function leaseOf(job: Job): Lease {
  return {
    job: { ...job.spec, payload: structuredClone(job.spec.payload) },
    delivery: job.deliveries,
    fence: String(job.fence),
    workerId: job.workerId,
    expiresAt: job.expiresAt,
  };
}

function closedError(): ServiceError {
  return new ServiceError('service_unavailable', 'the job queue is closed');
}
