/**
 * The job queue contract: what a worker claims, renews, completes or fails.
 * Two implementations keep it: the in-process queue (the embedded default, so
 * `npm start` needs no server) and JetStream work-queue streams (`NATS_URL`).
 * One conformance suite runs against both.
 *
 * Leases and fencing. A claim leases one delivery of a job for `leaseMs`; a
 * worker renews the lease while it works (JetStream: `working()`). A lease
 * that lapses makes the job available again, and the next claim gets a new
 * delivery with a larger fence. Completing or failing with a fence that is no
 * longer the job's current one is refused (`lease_lost`), even when the
 * transport would still accept the late ack: the fence, not the transport,
 * decides which delivery's result counts, so a job's effects apply once.
 *
 * Jobs are idempotent by id: enqueuing an id the queue already holds (pending,
 * leased, done or dead) returns the existing job and adds nothing.
 */

/** The queues the spec names; a worker serves some of them. */
export const QUEUE_NAMES = ['ingest', 'agent', 'render', 'voice', 'graph-maintenance'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobSpec {
  /** the idempotency key: the same id enqueued twice is one job */
  readonly id: string;
  readonly queue: QueueName;
  /** the organization the job acts for */
  readonly orgId: string;
  /** what the job is (e.g. `task_run`, `binding_run`, `ingest_body`, `graph_rebuild`) */
  readonly kind: string;
  /** JSON-serializable; bounded by the enqueuer (large bodies go by reference) */
  readonly payload: Record<string, unknown>;
}

type JobState = 'pending' | 'leased' | 'done' | 'dead';

export interface JobInfo extends JobSpec {
  readonly state: JobState;
  /** how many times it was handed to a worker */
  readonly deliveries: number;
  /** ms since epoch on the queue's clock */
  readonly enqueuedAt: number;
  readonly result: Record<string, unknown> | null;
  readonly error: string | null;
}

/** One delivery of a job to one worker. */
export interface Lease {
  readonly job: JobSpec;
  /** which delivery this is (1 for the first) */
  readonly delivery: number;
  /**
   * The fencing token: strictly larger for every new delivery of the job
   * (JetStream: `<stream sequence>.<delivery count>` compared as a pair;
   * in-process: a counter). Opaque to workers: they echo it back.
   */
  readonly fence: string;
  readonly workerId: string;
  /** when the lease lapses unless renewed (ms since epoch, queue clock) */
  readonly expiresAt: number;
}

export interface QueueStats {
  /** waiting for a worker */
  readonly depth: number;
  /** leased right now */
  readonly inflight: number;
  /** age of the oldest pending job, whole seconds; null when none waits */
  readonly oldestPendingS: number | null;
  /** deliveries after the first (lease lapsed or failed with retry) */
  readonly redelivered: number;
  /** jobs that ran out of deliveries */
  readonly deadLetters: number;
}

export interface JobQueue {
  /** idempotent by `spec.id` */
  enqueue(spec: JobSpec): Promise<JobInfo>;
  /** lease up to `max` jobs of these queues for this worker; waits at most `waitMs` for one */
  claim(workerId: string, queues: readonly QueueName[], options?: { readonly max?: number; readonly waitMs?: number }): Promise<Lease[]>;
  /** extend the lease; throws `lease_lost` when the fence is stale */
  renew(jobId: string, fence: string): Promise<Lease>;
  /** record the result once; throws `lease_lost` when the fence is stale */
  complete(jobId: string, fence: string, result: Record<string, unknown>): Promise<JobInfo>;
  /** give the job back for another delivery (or to the dead letters once `maxDeliver` is spent); `lease_lost` when stale */
  fail(jobId: string, fence: string, error: string): Promise<JobInfo>;
  get(jobId: string): Promise<JobInfo | null>;
  stats(): Promise<Record<QueueName, QueueStats>>;
  /** the jobs that ran out of deliveries, newest first */
  deadLetters(queue: QueueName, limit?: number): Promise<JobInfo[]>;
  /**
   * Housekeeping, also run on a timer by the queue itself: forgets settled
   * jobs older than the keep period, and (JetStream) keeps unsettled ledger
   * entries from ageing out and publishes again a job whose ledger entry was
   * written but whose message never reached the stream.
   */
  sweep(): Promise<SweepReport>;
  /** resolves when a job reaches `done` or `dead` (for a gateway waiting on a worker) */
  settled(jobId: string): Promise<JobInfo>;
  close(): Promise<void>;
}

/** the default keep period of settled jobs */
export const DEFAULT_SETTLED_KEEP_MS = 7 * 24 * 3600 * 1000;

/** how often a queue sweeps itself */
export function sweepInterval(options: JobQueueOptions): number {
  return options.sweepIntervalMs ?? Math.min(60_000, Math.max(100, (options.settledKeepMs ?? DEFAULT_SETTLED_KEEP_MS) / 4));
}

export interface SweepReport {
  /** pending jobs whose message was missing from the stream, published again */
  readonly republished: number;
  /** unsettled ledger entries (and counters) written again before the ledger's max age dropped them */
  readonly refreshed: number;
  /** settled jobs dropped (in-process; on JetStream the ledger stream's max age drops them) */
  readonly forgotten: number;
}

export interface JobQueueOptions {
  /** `WORKER_LEASE_TTL` in ms */
  readonly leaseMs: number;
  /** how long a settled (done or dead) job stays readable and idempotent; default 7 days */
  readonly settledKeepMs?: number;
  /** how often the queue sweeps itself; default min(60 s, settledKeepMs / 4) */
  readonly sweepIntervalMs?: number;
  /** deliveries before a job goes to the dead letters (JetStream `MaxDeliver`) */
  readonly maxDeliver: number;
}
