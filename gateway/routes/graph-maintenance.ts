/**
 * /graph/maintenance: index rebuilds of a realm's graph as jobs on the
 * `graph-maintenance` queue (feature `workers`; owner and admin:
 * `graph:manage`), and the worker route that does the engine work where the
 * engine lives (domains/workers/graph-maintenance.ts).
 */
import { z } from 'zod';
import { isoAt } from '../../runtime/clock.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { GRAPH_OPERATIONS, type GraphMaintenanceJob } from '../../domains/workers/graph-maintenance.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fenceBody, workerJobParams } from './worker-jobs.js';

const startBody = z.strictObject({
  realm: z.string().min(1).max(100).default(DEFAULT_REALM),
  operation: z.enum(GRAPH_OPERATIONS),
});
const jobParams = z.strictObject({ id: z.string().regex(/^gmt_[0-9A-HJKMNP-TV-Z]{26}$/, { message: 'not a graph maintenance job id' }) });
const rebuildSchema = z.object({ labels: z.array(z.string()) });
const jobSchema = z.object({
  id: z.string(),
  realm: z.string(),
  operation: z.enum(GRAPH_OPERATIONS),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  deliveries: z.number().int(),
  created_at: z.string(),
  result: rebuildSchema.nullable(),
  error: z.string().nullable(),
});

const present = (job: GraphMaintenanceJob) => ({
  id: job.id,
  realm: job.realm,
  operation: job.operation,
  status: job.status,
  deliveries: job.deliveries,
  created_at: isoAt(job.enqueuedAt),
  result: job.result,
  error: job.error,
});

export function graphMaintenanceRoutes({ graphMaintenance }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/graph/maintenance',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:manage',
      feature: 'workers',
      summary: "Queue a maintenance operation on a realm's graph (rebuild_indexes) for a worker; 503 worker_unavailable when none serves graph-maintenance",
      body: startBody,
      status: 202,
      response: jobSchema,
      errors: [503],
      handler: async ({ auth, body }) => ({ status: 202, json: present(await graphMaintenance.start(auth.orgId, body.realm, body.operation)) }),
    }),
    route({
      method: 'GET',
      path: '/graph/maintenance/:id',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:manage',
      feature: 'workers',
      summary: 'A graph maintenance job: queued, running, succeeded (with what was rebuilt) or failed',
      params: jobParams,
      response: jobSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await graphMaintenance.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'POST',
      path: '/workers/jobs/:job_id/graph-maintenance',
      tag: 'workers',
      auth: 'worker',
      feature: 'workers',
      audit: false,
      summary: "Do a leased graph maintenance job's engine work in the gateway, where the engine lives (WORKER_TOKEN); 409 lease_lost when the fence is stale",
      params: workerJobParams,
      body: fenceBody,
      response: rebuildSchema,
      errors: [409],
      handler: async ({ params, body }) => ({ status: 200, json: await graphMaintenance.perform(params.job_id, body.fence) }),
    }),
  ];
}
