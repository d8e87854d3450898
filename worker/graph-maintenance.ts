/**
 * Kind `graph_maintenance` (queue `graph-maintenance`): an index rebuild of a
 * realm's graph. The engine is embedded in the gateway (single-process), so
 * the worker holds the lease (renewed by the loop while it waits) and asks
 * the gateway to do the engine work with its fence; the answer is the job's
 * result. A stale fence is refused before the engine is touched (`lease_lost`).
 */
import type { JobHandler } from './handlers.js';

export const graphMaintenanceHandler: JobHandler = (job, context) =>
  context.client.post<Record<string, unknown>>(`/workers/jobs/${encodeURIComponent(job.id)}/graph-maintenance`, { fence: job.fence }, context.signal);
