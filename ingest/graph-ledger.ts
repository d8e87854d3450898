/**
 * The graph side of `context_nodes` ingests, kept in the DuckDB ledger
 * (`_ingest.graph_batches`): the request's bytes are committed in the same
 * transaction as its rows and run, marked `pending`; once the graph holds the
 * batch the record turns `done` (the bytes dropped, the counts and the rows
 * the graph refused kept). A batch still pending at start (the process died
 * between the two writes) is replayed; graph upserts are idempotent by key.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { asText, asTextOrNull } from './duck-values.js';
import type { ContextEngine } from './engine.js';

const TABLE = '_ingest.graph_batches';

export async function bootstrapGraphLedger(connection: DuckDBConnection): Promise<void> {
  await connection.run(`CREATE TABLE IF NOT EXISTS ${TABLE} (
    run_id BIGINT NOT NULL,
    org_id VARCHAR NOT NULL,
    pipeline_id VARCHAR NOT NULL,
    realm VARCHAR NOT NULL,
    key_field VARCHAR,
    status VARCHAR NOT NULL,
    body VARCHAR,
    nodes BIGINT,
    relationships BIGINT,
    rejected BIGINT,
    rejections VARCHAR
  )`);
}

/** a row the graph refused: its 1-based line in the body and why */
export interface GraphRejection {
  readonly line: number;
  readonly reason: string;
}

/** what the graph took of one batch */
export interface GraphOutcome {
  readonly nodes: number;
  readonly relationships: number;
  readonly rejected: number;
  /** the first rejections (at most MAX_REJECTIONS_KEPT) */
  readonly rejections: readonly GraphRejection[];
}

/** a batch whose graph write is owed */
export interface GraphBatch {
  readonly runId: number;
  readonly orgId: string;
  readonly pipelineId: string;
  readonly realm: string;
  readonly keyField: string | null;
  readonly body: Buffer;
}

export const MAX_REJECTIONS_KEPT = 20;

/** Inside the ingest transaction: the batch is owed to the graph. */
export async function insertGraphPending(connection: DuckDBConnection, batch: GraphBatch): Promise<void> {
  await connection.run(`INSERT INTO ${TABLE} (run_id, org_id, pipeline_id, realm, key_field, status, body) VALUES ($1, $2, $3, $4, $5, 'pending', $6)`, [
    batch.runId,
    batch.orgId,
    batch.pipelineId,
    batch.realm,
    batch.keyField,
    batch.body.toString('utf8'),
  ]);
}

export class GraphLedger {
  constructor(private readonly engine: ContextEngine) {}

  /** run ids of the batches still owed to the graph, oldest first */
  pendingRuns(): Promise<number[]> {
    return this.engine.use(async (connection) => {
      const reader = await connection.runAndReadAll(`SELECT run_id FROM ${TABLE} WHERE status = 'pending' ORDER BY run_id`);
      return reader.getRowsJS().map((row) => Number(row[0]));
    });
  }

  /** the batch of a run while it is pending; null once done (or never a graph batch) */
  pending(runId: number): Promise<GraphBatch | null> {
    return this.engine.use(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT org_id, pipeline_id, realm, key_field, body FROM ${TABLE} WHERE run_id = $1 AND status = 'pending'`,
        [runId],
      );
      const row = reader.getRowObjectsJS()[0];
      if (!row) return null;
      return {
        runId,
        orgId: asText(row['org_id']),
        pipelineId: asText(row['pipeline_id']),
        realm: asText(row['realm']),
        keyField: asTextOrNull(row['key_field']),
        body: Buffer.from(asText(row['body']), 'utf8'),
      };
    });
  }

  /** the graph holds the batch: keep what it took, drop the bytes */
  finish(runId: number, outcome: GraphOutcome): Promise<void> {
    return this.engine.use(async (connection) => {
      await connection.run(
        `UPDATE ${TABLE} SET status = 'done', body = NULL, nodes = $2, relationships = $3, rejected = $4, rejections = $5 WHERE run_id = $1`,
        [runId, outcome.nodes, outcome.relationships, outcome.rejected, JSON.stringify(outcome.rejections.slice(0, MAX_REJECTIONS_KEPT))],
      );
    });
  }

  /** the graph outcome of each of an organization's runs that has one (`pending` while owed) */
  outcomes(orgId: string, runIds: readonly number[]): Promise<Map<number, GraphOutcome | 'pending'>> {
    if (runIds.length === 0) return Promise.resolve(new Map<number, GraphOutcome | 'pending'>());
    return this.engine.use(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT run_id, status, nodes, relationships, rejected, rejections FROM ${TABLE} WHERE org_id = $1 AND list_contains($2::BIGINT[], run_id)`,
        [orgId, `[${runIds.map((id) => Math.trunc(id)).join(',')}]`],
      );
      const outcomes = new Map<number, GraphOutcome | 'pending'>();
      for (const row of reader.getRowObjectsJS()) {
        const runId = Number(row['run_id']);
        if (row['status'] !== 'done') {
          outcomes.set(runId, 'pending');
          continue;
        }
        outcomes.set(runId, {
          nodes: Number(row['nodes']),
          relationships: Number(row['relationships']),
          rejected: Number(row['rejected']),
          rejections: JSON.parse(asTextOrNull(row['rejections']) ?? '[]') as GraphRejection[],
        });
      }
      return outcomes;
    });
  }
}
