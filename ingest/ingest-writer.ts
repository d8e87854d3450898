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
import { scanBody } from './body-scan.js';
import { asText } from './duck-values.js';
import type { ContextEngine } from './engine.js';
import { badTimestampStatement, insertStatement, keysStatement, orderedKeysStatement } from './insert-sql.js';
import { insertGraphPending } from './graph-ledger.js';
import {
  findIdempotent,
  findPendingByKey,
  finishPendingRun,
  getRun,
  insertIdempotent,
  insertRun,
  pendingRuns,
  type QueuedRunState,
  type RunRecord,
} from './ledger.js';
import { countRows, deepLine, findBadLine, lineOfRow } from './ndjson-lines.js';
import { KeyedRwLocks } from './rw-lock.js';
import { Semaphore } from './semaphore.js';
import type { SpillFolder } from './spill.js';
import { qualified, schemaName, type TableCatalog, type TargetTable } from './table-catalog.js';

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
  /** a run queued for a worker (status `pending`): ended here instead of a new run being recorded */
  readonly queuedRunId?: number | undefined;
  /** a queued run's Idempotency-Key hash, of the body as received (the rows written are the worker's normalized ones) */
  readonly requestHash?: string | undefined;
}

/** what writing a queued run's rows did: the run as it is now, and whether this call wrote them */
export interface QueuedWrite {
  readonly run: QueuedRunState;
  /** whether this call ended the run (false: another delivery had ended it, nothing was written) */
  readonly ended: boolean;
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
 * concurrent requests exhausted the engine's memory limit. One: DuckDB spreads
 * a scan over its threads itself, and a second statement in flight only adds
 * a caller polling for tasks (bench/ingest.bench.ts, 1M rows, two pairs on 2
 * cores: one scan 24.8-26.5 server CPU-seconds and 0.69-0.73 of `read_json`
 * into a file; two scans 28.1-28.2 and 0.68).
 */
const CONCURRENT_SCANS = 1;

// wall clock: a record of when an ingest run finished, like the store's own stamps
const finishedNow = (): string => new Date().toISOString();

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
      // before DuckDB's reader (and any JSON.parse) walks a line: one structural pass over the bytes, which also
      // reads the top-level names
      const scan = scanBody(input.body, this.maxJsonDepth);
      if (scan.tooDeepAt !== -1) {
        const deep = deepLine(input.body, scan.tooDeepAt, this.maxJsonDepth);
        throw new ServiceError('bad_ndjson', `line ${deep.line} ${deep.reason}; nothing was written`, { line: deep.line, max_depth: this.maxJsonDepth });
      }
      const key = input.idempotencyKey;
      if (key === null) return await this.engine.use((connection) => this.write(connection, input, rowsIn, scan.keys, null));
      // one request per key at a time in this process (the only writer of the database)
      return await this.keyLocks.with(`${input.pipelineId}\n${key}`, true, () =>
        this.engine.use(async (connection) => {
          const requestHash = input.requestHash ?? `${input.autoCreate ? 1 : 0}${input.schemaEvolve ? 1 : 0}:${sha256Hex(input.body)}`;
          const existing = await findIdempotent(connection, input.orgId, input.pipelineId, key, input.arrival);
          if (existing) {
            if (existing.request_hash !== requestHash) {
              throw new ServiceError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
            }
            return { rows_in: existing.rows_in, rows_out: existing.rows_out, run_id: existing.run_id, replayed: true };
          }
          return this.write(connection, input, rowsIn, scan.keys, requestHash);
        }),
      );
    } catch (error) {
      throw await this.recordFailure(input, rowsIn, error);
    }
  }

  /** Records a run queued for a worker (status `pending`, naming its job) and returns its id; rows_in is counted now. */
  recordQueued(input: IngestInput, jobId: string): Promise<number> {
    return this.engine.use(async (connection) => {
      const runId = this.engine.nextRunId();
      const rowsIn = countRows(input.body);
      await insertRun(connection, input.orgId, {
        ...this.run(input, runId, rowsIn, 0, null),
        status: 'pending',
        finished_at: input.arrival.toISOString(),
        job_id: jobId,
      });
      return runId;
    });
  }

  /** Whether an Idempotency-Key of the pipeline is committed (a replay answers it) or held by a run still queued. */
  async queuedKey(
    orgId: string,
    pipelineId: string,
    key: string,
    now: Date,
  ): Promise<{ readonly committed: boolean; readonly pending: QueuedRunState | null }> {
    return this.engine.use(async (connection) => ({
      committed: (await findIdempotent(connection, orgId, pipelineId, key, now)) !== null,
      pending: await findPendingByKey(connection, orgId, pipelineId, key),
    }));
  }

  /** Every run still queued for a worker. */
  pendingRuns(): Promise<QueuedRunState[]> {
    return this.engine.use((connection) => pendingRuns(connection));
  }

  /**
   * Writes the rows of a run queued for a worker (status `pending`) and ends
   * it in the same transaction. One delivery at a time per run; a run that
   * already ended is answered as it is and nothing is written, so a job
   * delivered twice writes its rows once. A request error (bad line, missing
   * table) ends the run `failed`; an engine fault is thrown (the job is retried).
   */
  writeQueued(input: Omit<IngestInput, 'queuedRunId'>, runId: number): Promise<QueuedWrite> {
    return this.keyLocks.with(`run\n${runId}`, true, async () => {
      const before = await this.engine.use((connection) => getRun(connection, runId));
      if (!before) throw new ServiceError('not_found', `no ingest run ${runId}`);
      if (before.status !== 'pending') return { run: before, ended: false };
      try {
        const outcome = await this.ingest({ ...input, queuedRunId: runId });
        if (outcome.replayed) {
          // the Idempotency-Key's rows were committed by an earlier run: this one writes nothing
          await this.engine.use((connection) =>
            finishPendingRun(connection, runId, { status: 'succeeded', rows_out: 0, error_code: null, error: null, finished_at: finishedNow() }),
          );
        }
      } catch (error) {
        // a request error ended the run `failed` (recordFailure); anything else leaves it pending for another delivery
        if (!(error instanceof ServiceError) || error.status >= 500) throw error;
      }
      const after = await this.engine.use((connection) => getRun(connection, runId));
      if (!after) throw new ServiceError('not_found', `no ingest run ${runId}`);
      return { run: after, ended: true };
    });
  }

  /** Ends a pending run as failed (a worker refused its body, or its job ran out of deliveries); false when it had ended already. */
  failQueued(runId: number, failure: { readonly code: string; readonly message: string }): Promise<boolean> {
    return this.keyLocks.with(`run\n${runId}`, true, () =>
      this.engine.use((connection) =>
        finishPendingRun(connection, runId, {
          status: 'failed',
          rows_out: 0,
          error_code: failure.code,
          error: failure.message,
          finished_at: finishedNow(),
        }),
      ),
    );
  }

  /** Records a failed run for a request refused before the engine saw it (bad signature). */
  async refuse(input: Omit<IngestInput, 'autoCreate' | 'schemaEvolve' | 'idempotencyKey'>, error: ServiceError): Promise<unknown> {
    const full: IngestInput = { ...input, autoCreate: true, schemaEvolve: true, idempotencyKey: null };
    return this.recordFailure(full, countRows(input.body), error);
  }

  /** `scannedKeys`: the body's top-level names read in JavaScript (`scanBody`), null when DuckDB must read them */
  private async write(
    connection: DuckDBConnection,
    input: IngestInput,
    rowsIn: number,
    scannedKeys: string[] | null,
    requestHash: string | null,
  ): Promise<IngestOutcome> {
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
      let keys = scannedKeys;
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
          const runId = input.queuedRunId ?? this.engine.nextRunId();
          if (input.queuedRunId === undefined) await insertRun(connection, input.orgId, this.run(input, runId, rowsIn, written, null));
          else if (
            !(await finishPendingRun(connection, runId, { status: 'succeeded', rows_out: written, error_code: null, error: null, finished_at: finishedNow() }))
          ) {
            throw new Error(`ingest run ${runId} is no longer pending`);
          }
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
        if (input.queuedRunId !== undefined) {
          const ended = { status: 'failed', rows_out: 0, error_code: failure.code, error: failure.message, finished_at: finishedNow() } as const;
          await finishPendingRun(connection, input.queuedRunId, ended);
          return input.queuedRunId;
        }
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
