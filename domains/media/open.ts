/**
 * The media side of the service, wired and started: the jobs' record (domains/media/service.ts) and
 * the poller (poller.ts). Without feature `workers` the poller claims the `render` queue's polls
 * itself; with it, worker processes serving `render` claim them and step them through the gateway.
 * Jobs a previous process left unfinished carry on.
 */
import type { RuntimeClock } from '../../runtime/clock.js';
import type { ServiceConfig } from '../../runtime/config.js';
import type { JobQueue } from '../../runtime/jobs/queue.js';
import { MediaPoller, type MediaPollerDeps } from './poller.js';
import { MediaJobs, type MediaJobsDeps } from './service.js';

export interface MediaDeps extends Omit<MediaJobsDeps, 'queue'>, Pick<MediaPollerDeps, 'plugins' | 'sources' | 'files' | 'net'> {
  readonly queue: JobQueue;
  readonly clock: RuntimeClock;
  readonly config: Pick<ServiceConfig, 'media' | 'features' | 'workerLeaseTtlSeconds'>;
}

export async function openMedia(deps: MediaDeps): Promise<{ readonly jobs: MediaJobs; readonly poller: MediaPoller }> {
  const { config, collections, queue, clock, logger, feedOf, plugins, sources, files, net } = deps;
  const jobs = new MediaJobs({ collections, queue, clock, logger, feedOf });
  const leaseMs = config.workerLeaseTtlSeconds * 1000;
  const poller = new MediaPoller({
    jobs,
    queue,
    plugins,
    sources,
    files,
    net,
    clock,
    logger,
    ...config.media,
    leaseMs,
    claimsRender: !config.features.workers,
  });
  await poller.start();
  return { jobs, poller };
}
