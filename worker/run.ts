/**
 * The worker loop: register, heartbeat every lease/3, claim up to the free
 * slots, run each job's handler while renewing its lease every lease/3, then
 * complete or fail it. A lease the gateway refuses (`lease_lost`) aborts the
 * job: its result is never sent. `stop()` (SIGTERM) drains: no new claims,
 * jobs in hand finish.
 */
import { systemClock, type RuntimeClock } from '../runtime/clock.js';
import { GatewayError, type ClaimedJob, type WorkerClient } from './client.js';
import type { WorkerConfig } from './config.js';
import type { HandlerTable } from './handlers.js';

/** how long one claim waits on the gateway for a job */
const CLAIM_WAIT_MS = 5_000;
const RETRY_MS = 1_000;

export type Log = (fields: Record<string, unknown>, message: string) => void;

export class WorkerLoop {
  private workerId = '';
  private leaseMs = 300_000;
  private readonly running = new Set<Promise<void>>();
  private draining = false;
  private readonly claimAbort = new AbortController();
  private heartbeatTimer: unknown = null;

  constructor(
    private readonly config: WorkerConfig,
    private readonly client: WorkerClient,
    private readonly handlers: HandlerTable,
    private readonly log: Log,
    private readonly clock: RuntimeClock = systemClock,
  ) {}

  async run(): Promise<void> {
    await this.register();
    this.scheduleHeartbeat();
    while (!this.draining) {
      const free = this.config.slots - this.running.size;
      if (free <= 0) {
        await Promise.race(this.running);
        continue;
      }
      let jobs: ClaimedJob[];
      try {
        jobs = await this.client.claim(this.workerId, free, CLAIM_WAIT_MS, this.claimAbort.signal);
      } catch (error) {
        if (this.draining) break;
        await this.recover(error, 'claim failed');
        continue;
      }
      for (const job of jobs) {
        const done: Promise<void> = this.execute(job).finally(() => this.running.delete(done));
        this.running.add(done);
      }
    }
    await Promise.all(this.running);
    this.clock.clearTimeout(this.heartbeatTimer);
    this.log({ worker_id: this.workerId }, 'worker drained');
  }

  /** SIGTERM: finish the jobs in hand, claim nothing more */
  stop(): void {
    this.draining = true;
    this.claimAbort.abort();
  }

  private async register(): Promise<void> {
    for (;;) {
      try {
        const worker = await this.client.register({ name: this.config.name, queues: this.config.queues, slots: this.config.slots });
        this.workerId = worker.id;
        this.leaseMs = worker.lease_ttl_s * 1000;
        this.log({ worker_id: worker.id, queues: this.config.queues, slots: this.config.slots, lease_ttl_s: worker.lease_ttl_s }, 'worker registered');
        return;
      } catch (error) {
        if (error instanceof GatewayError && error.status === 401) throw error;
        this.log({ err: String(error) }, 'register failed; retrying');
        await this.sleep(RETRY_MS);
      }
    }
  }

  private scheduleHeartbeat(): void {
    this.heartbeatTimer = this.clock.setTimeout(() => {
      void this.client
        .heartbeat(this.workerId)
        .catch((error: unknown) => this.recover(error, 'heartbeat failed'))
        .finally(() => {
          if (!this.draining) this.scheduleHeartbeat();
        });
    }, this.leaseMs / 3);
  }

  /** a gateway that forgot this worker (restart) gets it registered again */
  private async recover(error: unknown, message: string): Promise<void> {
    this.log({ err: String(error), code: error instanceof GatewayError ? error.code : undefined }, message);
    if (error instanceof GatewayError && error.status === 404) await this.register();
    else await this.sleep(RETRY_MS);
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const abort = new AbortController();
    let lost = false;
    const onLost = (error: unknown): void => {
      if (error instanceof GatewayError && error.code === 'lease_lost') {
        lost = true;
        abort.abort();
        this.log({ job_id: job.id, fence: job.fence, code: 'lease_lost' }, 'lease lost; the job is abandoned');
      }
    };
    let renewTimer: unknown = null;
    const renew = (): void => {
      renewTimer = this.clock.setTimeout(() => {
        void this.client
          .renew(job)
          .catch(onLost)
          .finally(() => {
            if (!abort.signal.aborted) renew();
          });
      }, this.leaseMs / 3);
    };
    renew();
    this.log({ job_id: job.id, kind: job.kind, delivery: job.delivery, fence: job.fence }, 'job started');
    const handler = this.handlers[job.kind];
    try {
      if (!handler) throw new Error(`this worker has no handler for job kind "${job.kind}"`);
      const result = await handler(job, { workerId: this.workerId, client: this.client, signal: abort.signal, log: this.log });
      if (lost) return;
      await this.client.complete(job, result);
      this.log({ job_id: job.id, fence: job.fence }, 'job completed');
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'lease_lost') return onLost(error);
      if (lost) return;
      this.log({ job_id: job.id, err: String(error) }, 'job failed');
      await this.client.fail(job, error instanceof Error ? error.message : String(error)).catch(onLost);
    } finally {
      abort.abort();
      this.clock.clearTimeout(renewTimer);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }
}
