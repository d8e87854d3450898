/**
 * The context tables engine: one DuckDB database file (`CONTEXT_DB_PATH`)
 * opened by this process, a small pool of connections, and a state that is
 * `ok` or `down`. When DuckDB refuses to open (its file locked by another
 * process, unreadable, ...) the service still starts; every call answers 503
 * `engine_unavailable` and tries to open again, so the engine comes back as
 * soon as the cause is gone.
 */
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdirSync } from 'node:fs';
import { PRIVATE_DIR_MODE, tightenFiles } from '../runtime/file-modes.js';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { ServiceError } from '../runtime/errors.js';
import type { DependencyStatus } from '../runtime/health.js';
import { bootstrapGraphLedger } from './graph-ledger.js';
import { bootstrapLedger } from './ledger.js';

export interface ContextEngineOptions {
  /** the DuckDB file */
  readonly path: string;
  /** @default "256MB": DuckDB's memory limit (buffer-managed memory only); keeps the process RSS bounded (ingest/README.md) */
  readonly memoryLimit?: string;
  /** @default 8 */
  readonly connections?: number;
  readonly logger: Logger;
  /** called after every successful open (caches derived from the database start over) */
  readonly onOpen?: () => void;
}

class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];
  private created = 0;
  readonly all: DuckDBConnection[] = [];

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly size: number,
  ) {}

  async acquire(): Promise<DuckDBConnection> {
    const connection = this.idle.pop();
    if (connection) return connection;
    if (this.created < this.size) {
      this.created += 1;
      try {
        const fresh = await this.instance.connect();
        this.all.push(fresh);
        return fresh;
      } catch (error) {
        this.created -= 1;
        throw error;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(connection: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) next(connection);
    else this.idle.push(connection);
  }
}

export class ContextEngine {
  private instance: DuckDBInstance | null = null;
  private pool: ConnectionPool | null = null;
  private opening: Promise<void> | null = null;
  private closed = false;
  private lastError: string | null = null;
  /**
   * Run ids come from this process (the database's only writer), not from a
   * DuckDB sequence: a sequence makes concurrent ingest transactions wait for
   * each other's commit.
   */
  private lastRunId = 0;

  constructor(private readonly options: ContextEngineOptions) {}

  get state(): 'ok' | 'down' {
    return this.pool ? 'ok' : 'down';
  }

  /** Why the engine is down, for logs and error details. */
  get downReason(): string | null {
    return this.pool ? null : this.lastError;
  }

  /** Opens the database; never throws (a refusal leaves the engine `down`). */
  open(): Promise<void> {
    this.closed = false;
    this.opening ??= this.tryOpen().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private async tryOpen(): Promise<void> {
    if (this.pool) return;
    let instance: DuckDBInstance | null = null;
    let pool: ConnectionPool | null = null;
    try {
      mkdirSync(dirname(this.options.path), { recursive: true, mode: PRIVATE_DIR_MODE });
      instance = await DuckDBInstance.create(this.options.path, {
        memory_limit: this.options.memoryLimit ?? '256MB',
        // measured (bench/ingest.bench.ts, see ingest/README.md): at the 16 MB default a checkpoint every ~5
        // requests stalls the commits behind it; larger thresholds keep more unflushed rows in memory (48 MB:
        // +~20% rows/s, peak RSS ~460 MB of the 512 MB target) and lengthen WAL replay after a crash
        checkpoint_threshold: '48MB',
        // measured (issue 20, in-process: 300k rows in 8 MB inserts, 2 at a time): DuckDB's allocator kept up to
        // 128 MB of freed memory in its caches; flushed from 8 MB, the peak RSS is ~50 MB lower at the same CPU time
        allocator_flush_threshold: '8MB',
        allocator_bulk_deallocation_flush_threshold: '8MB',
        // refuse to load anything from the network: extensions come built in or not at all
        autoinstall_known_extensions: 'false',
      });
      tightenFiles([this.options.path, `${this.options.path}.wal`]);
      pool = new ConnectionPool(instance, this.options.connections ?? 8);
      const connection = await pool.acquire();
      try {
        this.lastRunId = await bootstrapLedger(connection);
        await bootstrapGraphLedger(connection);
      } finally {
        pool.release(connection);
      }
      this.options.onOpen?.();
      this.instance = instance;
      this.pool = pool;
      this.lastError = null;
      this.options.logger.info({ path: this.options.path }, 'context tables engine open');
    } catch (error) {
      this.lastError = (error as Error).message;
      for (const connection of pool?.all ?? []) connection.closeSync();
      instance?.closeSync();
      this.options.logger.warn({ path: this.options.path, err: this.lastError }, 'context tables engine unavailable');
    }
  }

  /**
   * Runs `work` on a pooled connection. While the engine is down it first tries
   * to open again; if that fails too, 503 `engine_unavailable`.
   */
  async use<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    if (!this.pool && !this.closed) await this.open();
    const pool = this.pool;
    if (!pool) {
      throw new ServiceError('engine_unavailable', 'the context tables engine is unavailable; retry with backoff', {
        reason: this.lastError ?? 'closed',
      });
    }
    const connection = await pool.acquire();
    try {
      return await work(connection);
    } catch (error) {
      if (isFatal(error)) this.markDown(error as Error);
      if (isRefusal(error)) {
        throw new ServiceError('engine_unavailable', 'the context tables engine refused the work; retry with backoff', {
          reason: (error as Error).message.split('\n')[0],
        });
      }
      throw error;
    } finally {
      pool.release(connection);
    }
  }

  /** A fatal DuckDB error invalidates the database: drop it and reopen on the next call. */
  private markDown(error: Error): void {
    this.options.logger.error({ err: error.message }, 'context tables engine failed; reopening on next use');
    this.lastError = error.message;
    this.shutdown();
  }

  private shutdown(): void {
    const { pool, instance } = this;
    this.pool = null;
    this.instance = null;
    for (const connection of pool?.all ?? []) connection.closeSync();
    instance?.closeSync();
  }

  /** A new ingest run id (integers, increasing; a failed transaction leaves a gap). */
  nextRunId(): number {
    this.lastRunId += 1;
    return this.lastRunId;
  }

  /** `context_tables` in /health. */
  async check(): Promise<DependencyStatus> {
    if (!this.pool) return 'down';
    // a database file removed under the running engine still answers from its open handle, but nothing
    // written from then on survives a restart: the engine is down for anything durable
    if (this.options.path !== ':memory:' && !existsSync(this.options.path)) return 'down';
    await this.use((connection) => connection.run('SELECT 1'));
    return 'ok';
  }

  /** Closes the database (DuckDB checkpoints its WAL on a clean close). */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening;
    this.shutdown();
  }
}

/**
 * DuckDB reports its exception class only as the message prefix. Out of
 * memory and I/O failures (disk full, file gone) are the engine refusing work,
 * not a bug: the client should retry later.
 */
function isRefusal(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return message.startsWith('Out of Memory Error') || message.startsWith('IO Error') || isFatal(error);
}

function isFatal(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return message.startsWith('FATAL Error') || message.includes('database has been invalidated');
}
