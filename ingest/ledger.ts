/**
 * Ingest runs and ingest idempotency records, kept in the DuckDB database
 * itself (schema `_ingest`): a successful request commits its rows, its run
 * record and its Idempotency-Key record in one transaction, so a retry after a
 * crash either finds the committed result or writes the rows exactly once.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { asText, asTextOrNull } from './duck-values.js';

/** Schema of the engine's own tables; organization schemas never start with `_`. */
const LEDGER_SCHEMA = '_ingest';

/** Idempotency-Key records older than this no longer dedupe. */
const INGEST_IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** Creates the ledger tables when missing; returns the highest run_id so far (0 on a new database). */
export async function bootstrapLedger(connection: DuckDBConnection): Promise<number> {
  await connection.run(`CREATE SCHEMA IF NOT EXISTS ${LEDGER_SCHEMA}`);
  await connection.run(`CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.runs (
    run_id BIGINT NOT NULL,
    org_id VARCHAR NOT NULL,
    pipeline_id VARCHAR NOT NULL,
    token_id VARCHAR,
    realm VARCHAR NOT NULL,
    target_table VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    rows_in BIGINT NOT NULL,
    rows_out BIGINT NOT NULL,
    error_code VARCHAR,
    error VARCHAR,
    idempotency_key VARCHAR,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL
  )`);
  await connection.run(`CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.idempotency (
    org_id VARCHAR NOT NULL,
    pipeline_id VARCHAR NOT NULL,
    "key" VARCHAR NOT NULL,
    request_hash VARCHAR NOT NULL,
    run_id BIGINT NOT NULL,
    rows_in BIGINT NOT NULL,
    rows_out BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
  )`);
  // a run queued for a worker (feature workers) names its job; older files gain the column here
  await connection.run(`ALTER TABLE ${LEDGER_SCHEMA}.runs ADD COLUMN IF NOT EXISTS job_id VARCHAR`);
  const reader = await connection.runAndReadAll(`SELECT coalesce(max(run_id), 0)::BIGINT FROM ${LEDGER_SCHEMA}.runs`);
  return Number(reader.getRowsJS()[0]?.[0] ?? 0);
}

export interface RunRecord {
  readonly run_id: number;
  readonly pipeline_id: string;
  readonly token_id: string | null;
  readonly realm: string;
  readonly target_table: string;
  /** `pending`: queued for a worker (its finished_at is its started_at until it ends) */
  readonly status: 'succeeded' | 'failed' | 'pending';
  readonly rows_in: number;
  readonly rows_out: number;
  readonly error_code: string | null;
  readonly error: string | null;
  readonly idempotency_key: string | null;
  readonly started_at: string;
  readonly finished_at: string;
  /** the worker job of a run queued for a worker */
  readonly job_id?: string | null;
}

export async function insertRun(connection: DuckDBConnection, orgId: string, run: RunRecord): Promise<void> {
  const values: DuckDBValue[] = [
    run.run_id,
    orgId,
    run.pipeline_id,
    run.token_id,
    run.realm,
    run.target_table,
    run.status,
    run.rows_in,
    run.rows_out,
    run.error_code,
    run.error,
    run.idempotency_key,
    run.started_at,
    run.finished_at,
    run.job_id ?? null,
  ];
  await connection.run(
    `INSERT INTO ${LEDGER_SCHEMA}.runs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::TIMESTAMPTZ, $14::TIMESTAMPTZ, $15)`,
    values,
  );
}

export interface IdempotentResult {
  readonly request_hash: string;
  readonly run_id: number;
  readonly rows_in: number;
  readonly rows_out: number;
}

export async function findIdempotent(
  connection: DuckDBConnection,
  orgId: string,
  pipelineId: string,
  key: string,
  now: Date,
): Promise<IdempotentResult | null> {
  const reader = await connection.runAndReadAll(
    `SELECT request_hash, run_id, rows_in, rows_out FROM ${LEDGER_SCHEMA}.idempotency
     WHERE org_id = $1 AND pipeline_id = $2 AND "key" = $3 AND created_at > $4::TIMESTAMPTZ
     ORDER BY created_at DESC LIMIT 1`,
    [orgId, pipelineId, key, new Date(now.getTime() - INGEST_IDEMPOTENCY_TTL_MS).toISOString()],
  );
  const row = reader.getRowObjectsJS()[0];
  if (!row) return null;
  return {
    request_hash: asText(row['request_hash']),
    run_id: Number(row['run_id']),
    rows_in: Number(row['rows_in']),
    rows_out: Number(row['rows_out']),
  };
}

/** Inside the ingest transaction; an expired record of the same key is replaced. */
export async function insertIdempotent(
  connection: DuckDBConnection,
  orgId: string,
  pipelineId: string,
  key: string,
  result: IdempotentResult,
  now: Date,
): Promise<void> {
  await connection.run(`DELETE FROM ${LEDGER_SCHEMA}.idempotency WHERE org_id = $1 AND pipeline_id = $2 AND "key" = $3`, [orgId, pipelineId, key]);
  await connection.run(`INSERT INTO ${LEDGER_SCHEMA}.idempotency VALUES ($1, $2, $3, $4, $5, $6, $7, $8::TIMESTAMPTZ)`, [
    orgId,
    pipelineId,
    key,
    result.request_hash,
    result.run_id,
    result.rows_in,
    result.rows_out,
    now.toISOString(),
  ]);
}

export interface RunPage {
  readonly items: RunRecord[];
  readonly total: number;
  /** run_id of the last item when more follow */
  readonly nextAfter: number | null;
}

/** Newest first; `before` is an exclusive upper bound on run_id. */
export async function listRuns(connection: DuckDBConnection, orgId: string, pipelineId: string, limit: number, before: number | null): Promise<RunPage> {
  const reader = await connection.runAndReadAll(
    `SELECT run_id, pipeline_id, token_id, realm, target_table, status, rows_in, rows_out, error_code, error, idempotency_key,
            epoch_ms(started_at) AS started_ms, epoch_ms(finished_at) AS finished_ms
     FROM ${LEDGER_SCHEMA}.runs
     WHERE org_id = $1 AND pipeline_id = $2 AND ($3::BIGINT IS NULL OR run_id < $3::BIGINT)
     ORDER BY run_id DESC LIMIT $4`,
    [orgId, pipelineId, before, limit + 1],
  );
  const rows = reader.getRowObjectsJS();
  const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${LEDGER_SCHEMA}.runs WHERE org_id = $1 AND pipeline_id = $2`, [orgId, pipelineId]);
  const items = rows.slice(0, limit).map((row): RunRecord => ({
    run_id: Number(row['run_id']),
    pipeline_id: asText(row['pipeline_id']),
    token_id: asTextOrNull(row['token_id']),
    realm: asText(row['realm']),
    target_table: asText(row['target_table']),
    status: row['status'] === 'succeeded' || row['status'] === 'pending' ? row['status'] : 'failed',
    rows_in: Number(row['rows_in']),
    rows_out: Number(row['rows_out']),
    error_code: asTextOrNull(row['error_code']),
    error: asTextOrNull(row['error']),
    idempotency_key: asTextOrNull(row['idempotency_key']),
    started_at: new Date(Number(row['started_ms'])).toISOString(),
    finished_at: new Date(Number(row['finished_ms'])).toISOString(),
  }));
  const last = items[items.length - 1];
  return {
    items,
    total: Number(counted.getRowsJS()[0]?.[0] ?? 0),
    nextAfter: rows.length > limit && last ? last.run_id : null,
  };
}

/** a queued run's state, for the worker path (domains/ingest-pipelines/queued-ingest.ts) */
export interface QueuedRunState {
  readonly run_id: number;
  readonly org_id: string;
  readonly pipeline_id: string;
  readonly status: RunRecord['status'];
  readonly rows_in: number;
  readonly rows_out: number;
  readonly error_code: string | null;
  readonly error: string | null;
  readonly job_id: string | null;
}

const QUEUED_COLUMNS = 'run_id, org_id, pipeline_id, status, rows_in, rows_out, error_code, error, job_id';

function queuedState(row: Record<string, unknown>): QueuedRunState {
  const status = asText(row['status']);
  return {
    run_id: Number(row['run_id']),
    org_id: asText(row['org_id']),
    pipeline_id: asText(row['pipeline_id']),
    status: status === 'succeeded' || status === 'pending' ? status : 'failed',
    rows_in: Number(row['rows_in']),
    rows_out: Number(row['rows_out']),
    error_code: asTextOrNull(row['error_code']),
    error: asTextOrNull(row['error']),
    job_id: asTextOrNull(row['job_id']),
  };
}

export async function getRun(connection: DuckDBConnection, runId: number): Promise<QueuedRunState | null> {
  const reader = await connection.runAndReadAll(`SELECT ${QUEUED_COLUMNS} FROM ${LEDGER_SCHEMA}.runs WHERE run_id = $1`, [runId]);
  const row = reader.getRowObjectsJS()[0];
  return row ? queuedState(row) : null;
}

/** every run still waiting for a worker (what a start reconciles with the job queue) */
export async function pendingRuns(connection: DuckDBConnection): Promise<QueuedRunState[]> {
  const reader = await connection.runAndReadAll(`SELECT ${QUEUED_COLUMNS} FROM ${LEDGER_SCHEMA}.runs WHERE status = 'pending' ORDER BY run_id`);
  return reader.getRowObjectsJS().map(queuedState);
}

/** a pending run of the pipeline with this Idempotency-Key (a retry of a queued request) */
export async function findPendingByKey(connection: DuckDBConnection, orgId: string, pipelineId: string, key: string): Promise<QueuedRunState | null> {
  const reader = await connection.runAndReadAll(
    `SELECT ${QUEUED_COLUMNS} FROM ${LEDGER_SCHEMA}.runs WHERE org_id = $1 AND pipeline_id = $2 AND idempotency_key = $3 AND status = 'pending' LIMIT 1`,
    [orgId, pipelineId, key],
  );
  const row = reader.getRowObjectsJS()[0];
  return row ? queuedState(row) : null;
}

/**
 * Ends a pending run; false when it is no longer pending (another delivery
 * ended it first). Inside the ingest transaction for a success, so the rows
 * and the end of the run commit together.
 */
export async function finishPendingRun(
  connection: DuckDBConnection,
  runId: number,
  end: {
    readonly status: 'succeeded' | 'failed';
    readonly rows_out: number;
    readonly error_code: string | null;
    readonly error: string | null;
    readonly finished_at: string;
  },
): Promise<boolean> {
  const result = await connection.run(
    `UPDATE ${LEDGER_SCHEMA}.runs SET status = $2, rows_out = $3, error_code = $4, error = $5, finished_at = $6::TIMESTAMPTZ
     WHERE run_id = $1 AND status = 'pending'`,
    [runId, end.status, end.rows_out, end.error_code, end.error, end.finished_at],
  );
  return Number(result.rowsChanged) === 1;
}
