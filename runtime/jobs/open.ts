import type { Logger } from 'pino';
import type { RuntimeClock } from '../clock.js';
import type { ServiceConfig } from '../config.js';
import { InProcessJobQueue } from './in-process-queue.js';
import { JetStreamJobQueue } from './jetstream-queue.js';
import type { JobQueue } from './queue.js';

/** deliveries of a job before it goes to the dead letters (JetStream `MaxDeliver`) */
const JOB_MAX_DELIVER = 5;

/**
 * The service's job queue: JetStream work-queue streams when `NATS_URL` is
 * set, else the in-process queue. The lease is `WORKER_LEASE_TTL`.
 */
export async function openJobQueue(
  config: Pick<ServiceConfig, 'natsUrl' | 'natsStreamPrefix' | 'workerLeaseTtlSeconds'>,
  clock: RuntimeClock,
  logger: Logger,
): Promise<JobQueue> {
  const options = { leaseMs: config.workerLeaseTtlSeconds * 1000, maxDeliver: JOB_MAX_DELIVER };
  if (config.natsUrl !== null) {
    const queue = await JetStreamJobQueue.open(clock, { ...options, url: config.natsUrl, prefix: config.natsStreamPrefix });
    logger.info({ lease_ms: options.leaseMs, max_deliver: options.maxDeliver, prefix: queue.prefix }, 'job queue: JetStream');
    return queue;
  }
  logger.info({ lease_ms: options.leaseMs, max_deliver: options.maxDeliver }, 'job queue: in-process');
  return new InProcessJobQueue(clock, options);
}
