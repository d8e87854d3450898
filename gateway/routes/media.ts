/**
 * /media/jobs: the durable media-generation jobs that media tools (`runway.media_*`) start
 * (domains/media): list (filters status, run_id), show (status, progress, cost, outputs copied
 * into the file store, error), cancel (the platform's task is deleted too). `media:read`,
 * `media:manage`; another organization's job is 404.
 */
import { z } from 'zod';
import { MEDIA_JOB_STATUSES, type MediaJobDoc } from '../../domains/media/documents.js';
import { MEDIA_POLL_KIND } from '../../domains/media/service.js';
import { ServiceError } from '../../runtime/errors.js';
import type { OrgId } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fence, workerJobParams } from './worker-jobs.js';

const listQuery = pageQuery.extend({
  status: z.enum(MEDIA_JOB_STATUSES).optional(),
  run_id: z.string().min(1).max(100).optional(),
});
const jobSchema = z.object({
  ...storedSchema,
  realm: z.string(),
  run_id: z.string().nullable(),
  source_id: z.string(),
  tool: z.string(),
  task_id: z.string(),
  status: z.enum(MEDIA_JOB_STATUSES),
  progress: z.number(),
  cost: z.number().nullable(),
  outputs: z.array(z.object({ path: z.string(), artifact_id: z.string().nullable(), content_type: z.string(), size: z.number() })),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  request: z.record(z.string(), z.unknown()),
  finished_at: z.string().nullable(),
});

const stepBody = z.strictObject({
  fence,
  /** false: where the job stands and the wait before its first poll, without polling */
  poll: z.boolean().default(true),
  /** the retryable failures in a row the previous step reported */
  retries: z.number().int().min(0).max(100).default(0),
});
const stepSchema = z.object({
  finished: z.boolean(),
  status: z.enum([...MEDIA_JOB_STATUSES, 'missing']),
  delay_ms: z.number().int(),
  retries: z.number().int(),
});

const present = (job: MediaJobDoc) => ({
  id: job.id,
  realm: job.realm,
  run_id: job.run_id,
  source_id: job.source_id,
  tool: `${job.connector}.${job.tool}`,
  task_id: job.task_id,
  status: job.status,
  progress: job.progress,
  cost: job.cost,
  outputs: job.outputs,
  error: job.error,
  request: job.request,
  finished_at: job.finished_at,
  created_at: job.created_at,
  updated_at: job.updated_at,
});

export function mediaRoutes({ mediaJobs, mediaPoller, workers }: Services): AnyRoute[] {
  const list = createPageResponder(mediaJobs.listing, present);
  return [
    route({
      method: 'GET',
      path: '/media/jobs',
      tag: 'media',
      auth: 'bearer',
      permission: 'media:read',
      summary: 'List media-generation jobs, newest first (filters: status, run_id)',
      query: listQuery,
      response: pageSchema(jobSchema),
      handler: async ({ auth, query }) => {
        const filter = { ...(query.status === undefined ? {} : { status: query.status }), ...(query.run_id === undefined ? {} : { run_id: query.run_id }) };
        return list(auth.orgId, query, Object.keys(filter).length === 0 ? undefined : filter);
      },
    }),
    route({
      method: 'GET',
      path: '/media/jobs/:id',
      tag: 'media',
      auth: 'bearer',
      permission: 'media:read',
      summary: 'A media-generation job: status, progress (0..1), estimated cost, outputs (files of the run) or error',
      params: idParams,
      response: jobSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await mediaJobs.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'POST',
      path: '/media/jobs/:id/cancel',
      tag: 'media',
      auth: 'bearer',
      permission: 'media:manage',
      summary: "Cancel an unfinished media job (the platform's task is deleted; a run waiting on it gets `cancelled`); 409 when already finished",
      params: idParams,
      response: jobSchema,
      errors: [409],
      handler: async ({ auth, params }) => ({
        status: 200,
        json: present(await mediaJobs.cancel(auth.orgId, params.id, (job) => mediaPoller.cancelTaskOf(auth.orgId, job))),
      }),
    }),
    route({
      method: 'POST',
      path: '/workers/jobs/:job_id/media-poll',
      tag: 'workers',
      auth: 'worker',
      feature: 'workers',
      audit: false,
      summary:
        "One step of a leased `media_poll` job, done in the gateway where the platform's credentials and the file store live: poll the platform task, record progress or the end (outputs copied first), answer the wait before the next step (WORKER_TOKEN); 409 lease_lost when the fence is stale, before anything is polled",
      params: workerJobParams,
      body: stepBody,
      response: stepSchema,
      errors: [409],
      handler: async ({ params, body }) => {
        const job = await workers.requireLease(params.job_id, body.fence);
        if (job.kind !== MEDIA_POLL_KIND) throw new ServiceError('not_found', `job ${params.job_id} is not a media poll`);
        const org = job.orgId as OrgId;
        const mediaJobId = String(job.payload['job_id']);
        // one platform call at most: the step's own timeout, not the worker's request, bounds it
        const step = body.poll ? await mediaPoller.step(org, mediaJobId, body.retries, AbortSignal.timeout(120_000)) : await mediaPoller.peek(org, mediaJobId);
        return { status: 200, json: { finished: step.finished, status: step.status, delay_ms: step.delayMs, retries: step.retries } };
      },
    }),
  ];
}
