/**
 * Graph maintenance through the `graph-maintenance` queue (feature `workers`).
 *
 * The graph engine (Kùzu) is embedded and single-process: only the gateway
 * may open its files. So the split is: the job (kind `graph_maintenance`) is
 * queued, leased, renewed, retried and dead-lettered like any other, and its
 * state is what `GET /graph/maintenance/:id` shows; the worker that leases it
 * asks the gateway, with its fence, to do the engine work
 * (`POST /workers/jobs/:job_id/graph-maintenance`), renewing the lease while
 * the gateway rebuilds, then completes the job with what was rebuilt. A stale
 * fence is refused (`409 lease_lost`) before the engine is touched; a
 * rebuild is idempotent, so a redelivery after a lost worker repeats it
 * harmlessly.
 */
import { ulid } from 'ulid';
import type { RuntimeClock } from '../../runtime/clock.js';
import { ServiceError } from '../../runtime/errors.js';
import type { GraphStore, IndexRebuild } from '../../runtime/graph/store.js';
import type { JobInfo } from '../../runtime/jobs/queue.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { WorkerService } from './service.js';

const GRAPH_MAINTENANCE_KIND = 'graph_maintenance';
export const GRAPH_OPERATIONS = ['rebuild_indexes'] as const;
type GraphOperation = (typeof GRAPH_OPERATIONS)[number];

export interface GraphMaintenanceJob {
  readonly id: string;
  readonly realm: string;
  readonly operation: GraphOperation;
  /** queued (waiting for a worker), running (leased), succeeded, failed (dead letters) */
  readonly status: 'queued' | 'running' | 'succeeded' | 'failed';
  readonly deliveries: number;
  readonly enqueuedAt: number;
  readonly result: IndexRebuild | null;
  readonly error: string | null;
}

interface Dependencies {
  readonly workers: WorkerService;
  readonly graph: () => GraphStore | null;
  /** throws 404 for a realm the organization does not have */
  readonly requireRealm: (orgId: OrgId, realm: string) => Promise<unknown>;
  readonly clock: RuntimeClock;
}

export class GraphMaintenance {
  constructor(private readonly deps: Dependencies) {}

  /** queues an operation on a realm: 503 `worker_unavailable` when no live worker serves the queue */
  async start(orgId: OrgId, realm: string, operation: GraphOperation): Promise<GraphMaintenanceJob> {
    this.store();
    await this.deps.requireRealm(orgId, realm);
    const job = await this.deps.workers.enqueueForWorker({
      id: `gmt_${ulid(this.deps.clock.now())}`,
      queue: 'graph-maintenance',
      orgId,
      kind: GRAPH_MAINTENANCE_KIND,
      payload: { realm, operation },
    });
    return present(job);
  }

  /** one of the organization's maintenance jobs; another organization's id is 404 */
  async get(orgId: OrgId, id: string): Promise<GraphMaintenanceJob> {
    const job = await this.deps.workers.queue.get(id);
    if (!job || job.orgId !== orgId || job.kind !== GRAPH_MAINTENANCE_KIND) {
      throw new ServiceError('not_found', `no graph maintenance job ${id}`);
    }
    return present(job);
  }

  /** the engine work of a leased job, run here where the engine lives; a stale fence is `lease_lost` before anything runs */
  async perform(jobId: string, fence: string): Promise<IndexRebuild> {
    const job = await this.deps.workers.requireLease(jobId, fence);
    if (job.kind !== GRAPH_MAINTENANCE_KIND) throw new ServiceError('not_found', `job ${jobId} is not graph maintenance`);
    const realm = String(job.payload['realm']);
    return this.store().rebuildIndexes({ orgId: job.orgId, realm });
  }

  private store(): GraphStore {
    const store = this.deps.graph();
    if (!store) throw new ServiceError('service_unavailable', 'no graph store is configured');
    return store;
  }
}

function present(job: JobInfo): GraphMaintenanceJob {
  const result = job.result && Array.isArray(job.result['labels']) ? { labels: job.result['labels'].map(String) } : null;
  return {
    id: job.id,
    realm: String(job.payload['realm']),
    operation: job.payload['operation'] as GraphOperation,
    status: STATUS[job.state],
    deliveries: job.deliveries,
    enqueuedAt: job.enqueuedAt,
    result,
    error: job.error,
  };
}

const STATUS = { pending: 'queued', leased: 'running', done: 'succeeded', dead: 'failed' } as const;
