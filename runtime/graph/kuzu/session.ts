/**
 * The store's one connection to a realm's database, behind one serial queue.
 *
 * Kùzu allows one write transaction at a time and crashes the process when a
 * connection whose BEGIN failed is used again, so every operation on the
 * database (reads included: they share the one connection) runs through the
 * queue. User Cypher goes through it too, but on connections of its own
 * (user-query.ts), so it cannot change this one's state.
 */
import { exec, openConnection, openDatabase, query, type Connection, type Database, type DatabaseOptions, type Row } from './engine.js';

/**
 * A write as Cypher with its rows as a list parameter: for updates, and for
 * inserts that CSV cannot carry (new rows otherwise go by COPY from CSV, the
 * engine's bulk path: the driver converts a list parameter a value at a
 * time, ~3x slower for 10k rows).
 */
export interface Statement {
  readonly text: string;
  readonly rows: unknown[];
}

export class KuzuSession {
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly database: Database,
    private readonly connection: Connection,
  ) {}

  static async open(path: string, options: DatabaseOptions & { readonly queryTimeoutMs: number }): Promise<KuzuSession> {
    const database = await openDatabase(path, options);
    return new KuzuSession(database, await openConnection(database, options.queryTimeoutMs));
  }

  /** runs `work` after everything queued before it, whether that succeeded or not */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** closes the connection and the database (the caller runs it through the queue) */
  async close(): Promise<void> {
    await this.connection.close();
    await this.database.close();
  }

  async transaction(work: () => Promise<void>): Promise<void> {
    await this.exec('BEGIN TRANSACTION');
    try {
      await work();
      await this.exec('COMMIT');
    } catch (error) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** a statement without parameters (DDL, transaction control, index procedures) */
  exec(statement: string): Promise<void> {
    return exec(this.connection, statement);
  }

  run(statement: string, params: Record<string, unknown> = {}): Promise<Row[]> {
    return query(this.connection, statement, params);
  }

  /** list-parameter statements, in order */
  async runAll(statements: readonly Statement[]): Promise<void> {
    for (const statement of statements) await this.run(statement.text, { rows: statement.rows });
  }
}
