/**
 * Opens the gateway's job queue. Until s-jobs' `runtime/jobs/open.ts` is
 * merged this is the interim in-process queue; then it delegates to
 * `openJobQueue(config, clock, logger)` (in-process or JetStream by `NATS_URL`).
 */
import type { RuntimeClock } from '../../runtime/clock.js';
import type { ServiceConfig } from '../../runtime/config.js';
import type { JobQueue } from '../../runtime/jobs/queue.js';
import { InterimJobQueue } from './interim-queue.js';

/** deliveries before a job goes to the dead letters */
const MAX_DELIVER = 5;

export function openWorkerQueue(config: ServiceConfig, clock: RuntimeClock): JobQueue {
  return new InterimJobQueue(clock, { leaseMs: config.workerLeaseTtlSeconds * 1000, maxDeliver: MAX_DELIVER });
}
