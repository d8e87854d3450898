/**
 * The graph half of a `context_nodes` ingest. The writer commits the rows,
 * the run and the batch marked as owed to the graph in one DuckDB
 * transaction (ingest/graph-ledger.ts); this then upserts the batch into the
 * realm's graph (nodes, then relationships; idempotent by key) and marks it
 * done. The caller is answered only after both. A batch still owed at start
 * (the process died in between) is replayed before the server listens; an
 * Idempotency-Key retry of a batch still owed completes it first.
 *
 * A row the graph refuses (no label or key, a name it cannot hold, a value
 * whose type clashes with its property's column) is left out of the graph and
 * reported with its line and reason; the table keeps it. Type clashes are
 * found by halving a refused write until the refused row is alone.
 */
import type { Logger } from 'pino';
import { MAX_REJECTIONS_KEPT, type GraphBatch, type GraphLedger, type GraphOutcome, type GraphRejection } from '../../ingest/graph-ledger.js';
import type { GraphScope, GraphStore } from '../../runtime/graph/store.js';
import { ServiceError } from '../../runtime/errors.js';
import { entityRecords, type Lined } from './entities.js';

export class EntityGraphFeed {
  constructor(
    private readonly ledger: GraphLedger,
    private readonly graph: GraphStore,
    private readonly logger: Logger,
  ) {}

  /** writes an owed batch into the graph and marks it done */
  async apply(batch: GraphBatch): Promise<GraphOutcome> {
    const scope: GraphScope = { orgId: batch.orgId, realm: batch.realm };
    const records = entityRecords(batch.body, batch.keyField);
    const rejections: GraphRejection[] = [...records.rejections];
    const nodes = await written(records.nodes, (items) => this.graph.upsertNodes(scope, items), rejections);
    const relationships = await written(records.relationships, (items) => this.graph.upsertRelationships(scope, items), rejections);
    rejections.sort((a, b) => a.line - b.line);
    const outcome: GraphOutcome = { nodes, relationships, rejected: rejections.length, rejections: rejections.slice(0, MAX_REJECTIONS_KEPT) };
    await this.ledger.finish(batch.runId, outcome);
    return outcome;
  }

  /** the graph outcome of a committed run: an owed batch is written first; null when the run fed no graph */
  async settle(orgId: string, runId: number): Promise<GraphOutcome | null> {
    const owed = await this.ledger.pending(runId);
    if (owed && owed.orgId === orgId) return this.apply(owed);
    const outcome = (await this.ledger.outcomes(orgId, [runId])).get(runId);
    return outcome === undefined || outcome === 'pending' ? null : outcome;
  }

  /** at start: every batch a previous process committed but did not finish in the graph; returns how many */
  async replay(): Promise<number> {
    const runs = await this.ledger.pendingRuns();
    for (const runId of runs) {
      const batch = await this.ledger.pending(runId);
      if (!batch) continue;
      const outcome = await this.apply(batch);
      this.logger.info({ run_id: runId, org_id: batch.orgId, realm: batch.realm, ...outcome, rejections: undefined }, 'ingest batch replayed into the graph');
    }
    return runs.length;
  }
}

/**
 * Writes the records; a write the graph refuses as invalid is halved until
 * each refused record stands alone and is rejected. Returns how many were written.
 */
async function written<T>(items: readonly Lined<T>[], write: (records: T[]) => Promise<unknown>, rejections: GraphRejection[]): Promise<number> {
  if (items.length === 0) return 0;
  try {
    await write(items.map((item) => item.record));
    return items.length;
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== 'validation_error') throw error;
    if (items.length === 1) {
      rejections.push({ line: items[0]!.line, reason: error.message });
      return 0;
    }
    const middle = items.length >> 1;
    return (await written(items.slice(0, middle), write, rejections)) + (await written(items.slice(middle), write, rejections));
  }
}
