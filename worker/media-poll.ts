/**
 * Kind `media_poll` (queue `render`, feature `workers`): follows one media-generation job to its end.
 * The platform's credentials, the egress guard and the file store stay in the gateway, so each step
 * (one poll of the platform task, its progress or end recorded, outputs copied) is done there behind
 * this worker's fence (`POST /workers/jobs/:id/media-poll`); the worker holds the lease (renewed by
 * the loop), keeps the backoff's count of failures in a row and waits the delay the gateway answers
 * between steps. A lease lost or a stop aborts the wait; the next delivery picks the job up where the
 * record stands.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobHandler } from './handlers.js';

interface MediaStep {
  readonly finished: boolean;
  readonly status: string;
  readonly delay_ms: number;
  readonly retries: number;
}

export const mediaPollHandler: JobHandler = async (job, context) => {
  const path = `/workers/jobs/${encodeURIComponent(job.id)}/media-poll`;
  let step = await context.client.post<MediaStep>(path, { fence: job.fence, poll: false }, context.signal);
  while (!step.finished) {
    await sleep(step.delay_ms, undefined, { signal: context.signal });
    step = await context.client.post<MediaStep>(path, { fence: job.fence, poll: true, retries: step.retries }, context.signal);
  }
  return { status: step.status };
};
