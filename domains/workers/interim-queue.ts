/**
 * A minimal in-process JobQueue used until s-jobs' `runtime/jobs/open.ts`
 * (`openJobQueue`) is merged; it keeps the contract of runtime/jobs/queue.ts
 * (leases on the runtime clock, a counter fence, redelivery after a lapsed
 * lease, dead letters after `maxDeliver`). Replaced by `openJobQueue` on merge.
 */
import type { RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import type { JobInfo, JobQueue, JobQueueOptions, JobSpec, Lease, QueueName, QueueStats } from '../../runtime/jobs/queue.js';
import { QUEUE_NAMES } from '../../runtime/jobs/queue.js';

interface Entry {
  info: JobInfo;
  fence: number;
  workerId: string | null;
  expiresAt: number;
  deadAt: number;
  waiters: ((info: JobInfo) => void)[];
}

const POLL_MS = 50;

export class InterimJobQueue implements JobQueue {
  private readonly jobs = new Map<string, Entry>();
  private readonly redelivered = new Map<QueueName, number>();
  private closed = false;

  constructor(
    private readonly clock: RuntimeClock,
    private readonly options: JobQueueOptions,
  ) {}

  enqueue(spec: JobSpec): Promise<JobInfo> {
    const existing = this.jobs.get(spec.id);
    if (existing) return Promise.resolve(existing.info);
    const info: JobInfo = { ...spec, state: 'pending', deliveries: 0, enqueuedAt: this.clock.now(), result: null, error: null };
    this.jobs.set(spec.id, { info, fence: 0, workerId: null, expiresAt: 0, deadAt: 0, waiters: [] });
    return Promise.resolve(info);
  }

  async claim(workerId: string, queues: readonly QueueName[], options: { readonly max?: number; readonly waitMs?: number } = {}): Promise<Lease[]> {
    const max = Math.max(1, options.max ?? 1);
    const deadline = this.clock.now() + Math.max(0, options.waitMs ?? 0);
    for (;;) {
      this.expireLeases();
      const leases: Lease[] = [];
      for (const entry of this.jobs.values()) {
        if (leases.length >= max) break;
        if (entry.info.state !== 'pending' || !queues.includes(entry.info.queue)) continue;
        leases.push(this.deliver(entry, workerId));
      }
      if (leases.length > 0 || this.closed || this.clock.now() >= deadline) return leases;
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, Math.min(POLL_MS, deadline - this.clock.now())));
    }
  }

  renew(jobId: string, fence: string): Promise<Lease> {
    const entry = this.current(jobId, fence);
    entry.expiresAt = this.clock.now() + this.options.leaseMs;
    return Promise.resolve(this.leaseOf(entry));
  }

  complete(jobId: string, fence: string, result: Record<string, unknown>): Promise<JobInfo> {
    const entry = this.current(jobId, fence);
    this.settle(entry, { ...entry.info, state: 'done', result });
    return Promise.resolve(entry.info);
  }

  fail(jobId: string, fence: string, error: string): Promise<JobInfo> {
    const entry = this.current(jobId, fence);
    const dead = entry.info.deliveries >= this.options.maxDeliver;
    if (dead) this.settle(entry, { ...entry.info, state: 'dead', error });
    else {
      entry.info = { ...entry.info, state: 'pending', error };
      entry.workerId = null;
    }
    return Promise.resolve(entry.info);
  }

  get(jobId: string): Promise<JobInfo | null> {
    this.expireLeases();
    return Promise.resolve(this.jobs.get(jobId)?.info ?? null);
  }

  stats(): Promise<Record<QueueName, QueueStats>> {
    this.expireLeases();
    const now = this.clock.now();
    const stats = {} as Record<QueueName, QueueStats>;
    for (const name of QUEUE_NAMES) {
      const entries = [...this.jobs.values()].filter((entry) => entry.info.queue === name);
      const pending = entries.filter((entry) => entry.info.state === 'pending');
      const oldest = pending.reduce<number | null>((min, entry) => (min === null || entry.info.enqueuedAt < min ? entry.info.enqueuedAt : min), null);
      stats[name] = {
        depth: pending.length,
        inflight: entries.filter((entry) => entry.info.state === 'leased').length,
        oldestPendingS: oldest === null ? null : Math.floor((now - oldest) / 1000),
        redelivered: this.redelivered.get(name) ?? 0,
        deadLetters: entries.filter((entry) => entry.info.state === 'dead').length,
      };
    }
    return Promise.resolve(stats);
  }

  deadLetters(queue: QueueName, limit = 50): Promise<JobInfo[]> {
    const dead = [...this.jobs.values()].filter((entry) => entry.info.queue === queue && entry.info.state === 'dead');
    dead.sort((a, b) => b.deadAt - a.deadAt);
    return Promise.resolve(dead.slice(0, limit).map((entry) => entry.info));
  }

  settled(jobId: string): Promise<JobInfo> {
    const entry = this.jobs.get(jobId);
    if (!entry) return Promise.reject(new ServiceError('not_found', `no job ${jobId}`));
    if (entry.info.state === 'done' || entry.info.state === 'dead') return Promise.resolve(entry.info);
    return new Promise((resolve) => entry.waiters.push(resolve));
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private deliver(entry: Entry, workerId: string): Lease {
    entry.fence += 1;
    entry.workerId = workerId;
    entry.expiresAt = this.clock.now() + this.options.leaseMs;
    entry.info = { ...entry.info, state: 'leased', deliveries: entry.info.deliveries + 1 };
    if (entry.info.deliveries > 1) this.redelivered.set(entry.info.queue, (this.redelivered.get(entry.info.queue) ?? 0) + 1);
    return this.leaseOf(entry);
  }

  private leaseOf(entry: Entry): Lease {
    const { state: _state, deliveries, enqueuedAt: _at, result: _result, error: _error, ...job } = entry.info;
    return { job, delivery: deliveries, fence: String(entry.fence), workerId: entry.workerId ?? '', expiresAt: entry.expiresAt };
  }

  /** the entry when `fence` is its live lease; `lease_lost` otherwise */
  private current(jobId: string, fence: string): Entry {
    this.expireLeases();
    const entry = this.jobs.get(jobId);
    if (!entry) throw new ServiceError('not_found', `no job ${jobId}`);
    if (entry.info.state !== 'leased' || String(entry.fence) !== fence) {
      throw new ServiceError('lease_lost', `the lease of job ${jobId} with fence ${fence} is no longer current`, { job_id: jobId });
    }
    return entry;
  }

  private expireLeases(): void {
    const now = this.clock.now();
    for (const entry of this.jobs.values()) {
      if (entry.info.state !== 'leased' || entry.expiresAt > now) continue;
      if (entry.info.deliveries >= this.options.maxDeliver) this.settle(entry, { ...entry.info, state: 'dead', error: 'lease expired' });
      else {
        entry.info = { ...entry.info, state: 'pending' };
        entry.workerId = null;
      }
    }
  }

  private settle(entry: Entry, info: JobInfo): void {
    entry.info = info;
    entry.workerId = null;
    if (info.state === 'dead') entry.deadAt = this.clock.now();
    for (const waiter of entry.waiters.splice(0)) waiter(info);
  }
}
