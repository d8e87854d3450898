/**
 * /workers: the routes worker processes call with `WORKER_TOKEN` (register,
 * heartbeat, claim, renew, complete, fail), and `GET /workers/status` for the
 * organization's owners and admins. Feature `workers`.
 */
import { z } from 'zod';
import { isoAt } from '../../runtime/clock.js';
import { QUEUE_NAMES, type JobInfo, type Lease, type QueueName } from '../../runtime/jobs/queue.js';
import { MAX_CLAIM_WAIT_MS, type WorkerRecord } from '../../domains/workers/service.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fence, fenceBody, fenceQuery, workerJobParams } from './worker-jobs.js';

const queueName = z.enum(QUEUE_NAMES);
const workerId = z.string().regex(/^wrk_[0-9A-HJKMNP-TV-Z]{26}$/, { message: 'not a worker id' });
const jsonObject = z.record(z.string(), z.unknown());

const workerParams = z.strictObject({ id: workerId });

const registerBody = z.strictObject({
  name: z.string().min(1).max(100).nullish(),
  queues: z.array(queueName).min(1).max(QUEUE_NAMES.length),
  slots: z.number().int().min(1).max(64).default(1),
});
const claimBody = z.strictObject({
  max: z.number().int().min(1).max(64).default(1),
  wait_ms: z.number().int().min(0).max(MAX_CLAIM_WAIT_MS).default(0),
});
const completeBody = z.strictObject({ fence, result: jsonObject.default({}) });
const failBody = z.strictObject({ fence, error: z.string().min(1).max(4000) });
const eventsBody = z.strictObject({ fence, deltas: z.array(z.string().max(65_536)).min(1).max(1000) });
const turnInputSchema = z.object({
  run_id: z.string(),
  turn: z.number().int(),
  provider: z.string(),
  base_url: z.string().nullable(),
  api_key: z.string().nullable(),
  egress_guarded: z.boolean(),
  model: z.string(),
  temperature: z.number().nullable(),
  messages: z.array(jsonObject),
  tools: z.array(jsonObject),
});

const workerSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  queues: z.array(queueName),
  slots: z.number().int(),
  registered_at: z.string(),
  last_heartbeat: z.string(),
});
const leaseSchema = z.object({
  id: z.string(),
  queue: queueName,
  kind: z.string(),
  org_id: z.string(),
  payload: jsonObject,
  fence: z.string(),
  delivery: z.number().int(),
  expires_at: z.string(),
});
const jobSchema = z.object({
  id: z.string(),
  queue: queueName,
  kind: z.string(),
  state: z.enum(['pending', 'leased', 'done', 'dead']),
  deliveries: z.number().int(),
  error: z.string().nullable(),
});
const queueStatsSchema = z.object({
  depth: z.number().int(),
  inflight: z.number().int(),
  oldest_pending_s: z.number().int().nullable(),
  redelivered: z.number().int(),
  dead_letters: z.number().int(),
});
const statusSchema = z.object({
  workers: z.array(workerSchema.extend({ alive: z.boolean() })),
  queues: z.object(Object.fromEntries(QUEUE_NAMES.map((name) => [name, queueStatsSchema])) as Record<QueueName, typeof queueStatsSchema>),
});

const presentWorker = (worker: WorkerRecord) => ({
  id: worker.id,
  name: worker.name,
  queues: [...worker.queues],
  slots: worker.slots,
  registered_at: isoAt(worker.registeredAt),
  last_heartbeat: isoAt(worker.lastHeartbeat),
});

const presentLease = (lease: Lease) => ({
  id: lease.job.id,
  queue: lease.job.queue,
  kind: lease.job.kind,
  org_id: lease.job.orgId,
  payload: lease.job.payload,
  fence: lease.fence,
  delivery: lease.delivery,
  expires_at: isoAt(lease.expiresAt),
});

const presentJob = (job: JobInfo) => ({ id: job.id, queue: job.queue, kind: job.kind, state: job.state, deliveries: job.deliveries, error: job.error });

const common = { tag: 'workers', feature: 'workers', audit: false } as const;

export function workerRoutes({ workers, workerTurns }: Services): AnyRoute[] {
  return [
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/register',
      summary: 'Register a worker process (WORKER_TOKEN)',
      body: registerBody,
      response: workerSchema.extend({ lease_ttl_s: z.number().int() }),
      status: 201,
      handler: ({ body }) => Promise.resolve({ status: 201, json: { ...presentWorker(workers.register(body)), lease_ttl_s: workers.leaseMs / 1000 } }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/:id/heartbeat',
      summary: "Record a worker's heartbeat (WORKER_TOKEN)",
      params: workerParams,
      response: workerSchema,
      handler: ({ params }) => Promise.resolve({ status: 200, json: presentWorker(workers.heartbeat(params.id)) }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/:id/claim',
      summary: "Lease up to `max` jobs of the worker's queues, waiting at most `wait_ms` (WORKER_TOKEN)",
      params: workerParams,
      body: claimBody,
      response: z.object({ jobs: z.array(leaseSchema) }),
      handler: async ({ request, params, body }) => {
        let gone = false;
        request.onAborted?.(() => (gone = true));
        const leases = await workers.claim(params.id, body.max, body.wait_ms, () => gone);
        return { status: 200, json: { jobs: leases.map(presentLease) } };
      },
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/jobs/:job_id/renew',
      summary: "Extend a job's lease (WORKER_TOKEN); 409 lease_lost when the fence is stale",
      params: workerJobParams,
      body: fenceBody,
      response: leaseSchema,
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: presentLease(await workers.renew(params.job_id, body.fence)) }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/jobs/:job_id/complete',
      summary: "Record a job's result once (WORKER_TOKEN); 409 lease_lost when the fence is stale",
      params: workerJobParams,
      body: completeBody,
      response: jobSchema,
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: presentJob(await workers.complete(params.job_id, body.fence, body.result)) }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/jobs/:job_id/fail',
      summary: 'Give a job back for another delivery, or to the dead letters after the last (WORKER_TOKEN)',
      params: workerJobParams,
      body: failBody,
      response: jobSchema,
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: presentJob(await workers.fail(params.job_id, body.fence, body.error)) }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'GET',
      path: '/workers/jobs/:job_id/input',
      summary: "A model turn's input for the worker holding `fence` (WORKER_TOKEN); 409 lease_lost, 404 when the turn is no longer awaited",
      params: workerJobParams,
      query: fenceQuery,
      response: turnInputSchema,
      errors: [409],
      handler: async ({ params, query }) => ({ status: 200, json: await workerTurns.input(params.job_id, query.fence) }),
    }),
    route({
      ...common,
      auth: 'worker',
      method: 'POST',
      path: '/workers/jobs/:job_id/events',
      summary: "A model turn's text deltas, appended to its run's events in order (WORKER_TOKEN); 409 lease_lost when the fence is stale",
      params: workerJobParams,
      body: eventsBody,
      response: z.object({ accepted: z.number().int() }),
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: { accepted: await workerTurns.deltas(params.job_id, body.fence, body.deltas) } }),
    }),
    route({
      method: 'GET',
      path: '/workers/status',
      tag: 'workers',
      summary: 'Worker processes and queue statistics (queues are global)',
      auth: 'bearer',
      permission: 'worker:read',
      feature: 'workers',
      response: statusSchema,
      handler: async () => {
        const status = await workers.status();
        const queues = Object.fromEntries(
          Object.entries(status.queues).map(([name, stats]) => [
            name,
            {
              depth: stats.depth,
              inflight: stats.inflight,
              oldest_pending_s: stats.oldestPendingS,
              redelivered: stats.redelivered,
              dead_letters: stats.deadLetters,
            },
          ]),
        );
        return { status: 200, json: { workers: status.workers.map((worker) => ({ ...presentWorker(worker), alive: worker.alive })), queues } };
      },
    }),
  ];
}
