/**
 * One ingest request, end to end on the engine side: count rows, dedupe by
 * Idempotency-Key, spill the body, discover its properties, grow the table,
 * insert every row with DuckDB's native reader, and commit rows + run record +
 * idempotency record together. The caller is answered only after COMMIT, which
 * DuckDB makes durable through its write-ahead log.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { sha256Hex } from '../runtime/crypto.js';
import { ServiceError } from '../runtime/errors.js';
import { countCandidates, planColumns } from './columns.js';
import { asText } from './duck-values.js';
import type { ContextEngine } from './engine.js';
import { badTimestampStatement, insertStatement, keysStatement, orderedKeysStatement } from './insert-sql.js';
import { insertGraphPending } from './graph-ledger.js';
import { findIdempotent, insertIdempotent, insertRun, type RunRecord } from './ledger.js';
import { countRows, findBadLine, findDeepLine, lineOfRow } from './ndjson-lines.js';
import { KeyedRwLocks } from './rw-lock.js';
import { Semaphore } from './semaphore.js';
import type { SpillFolder } from './spill.js';
import { qualified, schemaName, type TableCatalog, type TargetTable } from './table-catalog.js';
import { topLevelKeys } from './top-keys.js';

export interface IngestInput {
  readonly orgId: string;
  readonly pipelineId: string;
  readonly tokenId: string;
  readonly realm: string;
  readonly table: TargetTable;
  /** the exact bytes received */
  readonly body: Buffer;
  /** `X-Auto-Create`, default true */
  readonly autoCreate: boolean;
  /** `X-Schema-Evolve`, default true */
  readonly schemaEvolve: boolean;
  readonly idempotencyKey: string | null;
  readonly arrival: Date;
  /** set for a pipeline feeding the graph: the batch is recorded as owed to it in the same transaction (graph-ledger.ts) */
  readonly graph?: { readonly keyField: string | null } | undefined;
}

export interface IngestOutcome {
  readonly rows_in: number;
  readonly rows_out: number;
  readonly run_id: number;
  /** true when an Idempotency-Key retry was answered from the original result */
  readonly replayed: boolean;
}

/**
 * Statements that read a spilled body at the same time. DuckDB's JSON reader
 * takes a 32 MiB buffer per scan whatever the file size; unbounded, four
 * concurrent requests exhausted the engine's memory limit. Two keep both cores
 * busy (measured in bench/ingest.bench.ts).
 */
const CONCURRENT_SCANS = 2;

/** Errors that still leave a failed run record (the engine answered, the request was wrong). */
const RECORDED = new Set(['bad_ndjson', 'table_not_found', 'bad_signature', 'idempotency_key_reused', 'internal_error']);

export class IngestWriter {
  private readonly keyLocks = new KeyedRwLocks();
  private readonly scans = new Semaphore(CONCURRENT_SCANS);

  constructor(
    private readonly engine: ContextEngine,
    private readonly catalog: TableCatalog,
    private readonly spill: SpillFolder,
    private readonly logger: Logger,
    /** `MAX_JSON_DEPTH`, per line */
    private readonly maxJsonDepth: number,
  ) {}

  async ingest(input: IngestInput): Promise<IngestOutcome> {
    const rowsIn = countRows(input.body);
    try {
      if (rowsIn === 0) throw new ServiceError('bad_ndjson', 'the body has no rows: every line is empty', { rows: 0 });
      // before DuckDB's reader (and any JSON.parse) walks a line: one structural pass over the bytes
      const deep = findDeepLine(input.body, this.maxJsonDepth);
      if (deep) {
        throw new ServiceError('bad_ndjson', `line ${deep.line} ${deep.reason}; nothing was written`, { line: deep.line, max_depth: this.maxJsonDepth });
      }
      const key = input.idempotencyKey;
      if (key === null) return await this.engine.use((connection) => this.write(connection, input, rowsIn, null));
      // one request per key at a time in this process (the only writer of the database)
      return await this.keyLocks.with(`${input.pipelineId}\n${key}`, true, () =>
        this.engine.use(async (connection) => {
          const requestHash = `${input.autoCreate ? 1 : 0}${input.schemaEvolve ? 1 : 0}:${sha256Hex(input.body)}`;
          const existing = await findIdempotent(connection, input.orgId, input.pipelineId, key, input.arrival);
          if (existing) {
            if (existing.request_hash !== requestHash) {
              throw new ServiceError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
            }
            return { rows_in: existing.rows_in, rows_out: existing.rows_out, run_id: existing.run_id, replayed: true };
          }
          return this.write(connection, input, rowsIn, requestHash);
        }),
      );
    } catch (error) {
      throw await this.recordFailure(input, rowsIn, error);
    }
  }

  /** Records a failed run for a request refused before the engine saw it (bad signature). */
  async refuse(input: Omit<IngestInput, 'autoCreate' | 'schemaEvolve' | 'idempotencyKey'>, error: ServiceError): Promise<unknown> {
    const full: IngestInput = { ...input, autoCreate: true, schemaEvolve: true, idempotencyKey: null };
    return this.recordFailure(full, countRows(input.body), error);
  }

  private async write(connection: DuckDBConnection, input: IngestInput, rowsIn: number, requestHash: string | null): Promise<IngestOutcome> {
    const schema = schemaName(input.orgId, input.realm);
    const lockKey = `${schema}.${input.table}`;
    let columns = await this.catalog.columnsOf(connection, schema, input.table);
    if (!columns) {
      if (!input.autoCreate) {
        throw new ServiceError('table_not_found', `table ${input.table} does not exist in realm ${input.realm} and X-Auto-Create is false`, {
          table: input.table,
          realm: input.realm,
        });
      }
      columns = await this.catalog.locks.with(lockKey, true, () => this.catalog.createTable(connection, schema, input.table));
    }
    const body = input.body;
    return this.spill.with(body, async (file) => {
      let keys = topLevelKeys(body);
      // every name has its column already (the steady state): no DuckDB discovery scan; else DuckDB reads the
      // names, validating the body before any ALTER
      if (keys === null || (input.schemaEvolve && countCandidates(keys, columns) > 0)) {
        try {
          keys = await this.scans.with(() => readKeys(connection, keysStatement(file, body.length)));
          // new columns are added in first-appearance order (and the 33rd is the one left out): only then is order read
          if (input.schemaEvolve && countCandidates(keys, columns) > 0) {
            keys = await this.scans.with(() => readKeys(connection, orderedKeysStatement(file, body.length)));
          }
        } catch (error) {
          throw await this.explain(connection, error, body, file);
        }
      }
      let plan = planColumns(keys, columns, input.schemaEvolve);
      if (plan.add.length > 0) {
        const grown = await this.catalog.locks.with(lockKey, true, () => this.catalog.addColumns(connection, schema, input.table, plan.add));
        // what exists now (ours and any a concurrent request added) is stored; nothing more is added
        plan = planColumns(keys, grown, false);
      }
      const statement = insertStatement({
        table: qualified(schema, input.table),
        file,
        stored: plan.stored,
        catchAll: plan.leftovers.length > 0,
        arrival: input.arrival,
        maxLineBytes: body.length,
      });

      return this.catalog.locks.with(lockKey, false, async () => {
        await connection.run('BEGIN TRANSACTION');
        try {
          const result = await this.scans.with(() => connection.run(statement));
          const written = Number(result.rowsChanged);
          if (written !== rowsIn) throw new Error(`DuckDB read ${written} rows where the body has ${rowsIn}`);
          const runId = this.engine.nextRunId();
          await insertRun(connection, input.orgId, this.run(input, runId, rowsIn, written, null));
          if (input.graph) {
            const batch = { runId, orgId: input.orgId, pipelineId: input.pipelineId, realm: input.realm, keyField: input.graph.keyField, body };
            await insertGraphPending(connection, batch);
          }
          if (requestHash !== null && input.idempotencyKey !== null) {
            await insertIdempotent(
              connection,
              input.orgId,
              input.pipelineId,
              input.idempotencyKey,
              {
                request_hash: requestHash,
                run_id: runId,
                rows_in: rowsIn,
                rows_out: written,
              },
              input.arrival,
            );
          }
          await connection.run('COMMIT');
          return { rows_in: rowsIn, rows_out: written, run_id: runId, replayed: false };
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined); // already rolled back by DuckDB on a failed statement
          throw await this.explain(connection, error, body, file);
        }
      });
    });
  }

  /**
   * DuckDB refused the body: find the line to blame in JavaScript (the first
   * line that is not a JSON object), else a row whose `at` is not a timestamp.
   * Anything else is not the client's fault and is rethrown.
   */
  private async explain(connection: DuckDBConnection, error: unknown, body: Buffer, file: string): Promise<unknown> {
    if (error instanceof ServiceError) return error;
    const bad = findBadLine(body);
    if (bad) {
      return new ServiceError('bad_ndjson', `line ${bad.line} ${bad.reason}; nothing was written`, { line: bad.line });
    }
    const reader = await this.scans.with(() => connection.runAndReadAll(badTimestampStatement(file, body.length))).catch(() => null); // the original error is the better report then
    const row = reader?.getRowsJS()[0]?.[0];
    if (row !== undefined && row !== null) {
      const line = lineOfRow(body, Number(row)) ?? Number(row) + 1;
      return new ServiceError('bad_ndjson', `line ${line} has an "at" that is not a timestamp (ISO 8601 or epoch seconds/milliseconds); nothing was written`, {
        line,
      });
    }
    return error;
  }

  private run(input: IngestInput, runId: number, rowsIn: number, rowsOut: number, error: ServiceError | null): RunRecord {
    return {
      run_id: runId,
      pipeline_id: input.pipelineId,
      token_id: input.tokenId,
      realm: input.realm,
      target_table: input.table,
      status: error ? 'failed' : 'succeeded',
      rows_in: rowsIn,
      rows_out: rowsOut,
      error_code: error?.code ?? null,
      error: error?.message ?? null,
      idempotency_key: input.idempotencyKey,
      started_at: input.arrival.toISOString(),
      // wall clock: a record of when the ingest run finished, like the store's own stamps
      finished_at: new Date().toISOString(),
    };
  }

  /** Writes the failed run (best effort) and returns the error to throw, its details naming the run. */
  private async recordFailure(input: IngestInput, rowsIn: number, error: unknown): Promise<unknown> {
    const failure = error instanceof ServiceError ? error : new ServiceError('internal_error', 'the ingest failed unexpectedly; nothing was written');
    if (!RECORDED.has(failure.code) || this.engine.state !== 'ok') return error;
    try {
      const runId = await this.engine.use(async (connection) => {
        const id = this.engine.nextRunId();
        await insertRun(connection, input.orgId, this.run(input, id, rowsIn, 0, failure));
        return id;
      });
      if (!(error instanceof ServiceError)) return error; // the gateway logs it and answers 500
      return new ServiceError(failure.code, failure.message, { ...failure.details, run_id: runId }, failure.headers);
    } catch (recordError) {
      this.logger.warn({ err: recordError, pipeline_id: input.pipelineId }, 'could not record a failed ingest run');
      return error;
    }
  }
}

async function readKeys(connection: DuckDBConnection, statement: string): Promise<string[]> {
  const reader = await connection.runAndReadAll(statement);
  return reader.getRowsJS().map((row) => asText(row[0]));
}
