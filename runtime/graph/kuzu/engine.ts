/**
 * The one module that imports the `kuzu` package: opening databases and
 * connections, and running statements on them. Every other Kùzu file gets
 * the engine's types from here, so moving to another build of the engine
 * (its maintained fork) changes this module only.
 */
import kuzu from 'kuzu';
import type { Connection, Database, KuzuValue, QueryResult } from 'kuzu';

export type { Connection, Database, QueryResult };

/** one result row, by column name */
export type Row = Record<string, KuzuValue>;

export interface DatabaseOptions {
  /** the engine's page cache for this database */
  readonly bufferPoolBytes: number;
  /** address space reserved for the file (virtual, not resident) */
  readonly maxDbBytes: number;
}

export async function openDatabase(path: string, options: DatabaseOptions): Promise<Database> {
  const database = new kuzu.Database(path, options.bufferPoolBytes, true, false, options.maxDbBytes);
  await database.init();
  return database;
}

/**
 * Runs the engine's first statement of the process on a throwaway in-memory
 * database: that one costs ~20-30 ms of CPU (the engine sets itself up once),
 * which would otherwise fall on the first request that touches a graph.
 */
export async function warmUpEngine(): Promise<void> {
  const database = await openDatabase(':memory:', { bufferPoolBytes: 16 * 1024 * 1024, maxDbBytes: 2 ** 30 });
  try {
    const connection = await openConnection(database);
    try {
      await exec(connection, 'CALL show_tables() RETURN name');
    } finally {
      await connection.close();
    }
  } finally {
    await database.close();
  }
}

/** a new connection to the database; statements on it are interrupted after `timeoutMs` (none: never) */
export async function openConnection(database: Database, timeoutMs?: number): Promise<Connection> {
  const connection = new kuzu.Connection(database);
  await connection.init();
  if (timeoutMs !== undefined) connection.setQueryTimeout(timeoutMs);
  return connection;
}

/** the first result of a statement (the engine answers a list for several), the others closed */
function single(result: QueryResult | QueryResult[]): QueryResult {
  if (Array.isArray(result)) {
    for (const extra of result.slice(1)) extra.close();
    return result[0]!;
  }
  return result;
}

/** a statement without parameters (DDL, transaction control, index procedures), its result dropped */
export async function exec(connection: Connection, statement: string): Promise<void> {
  single(await connection.query(statement)).close();
}

/** a prepared statement's result (the caller closes it); its prepare error as the engine's message */
export async function execute(connection: Connection, statement: string, params: Record<string, unknown>): Promise<QueryResult> {
  const prepared = await connection.prepare(statement);
  if (!prepared.isSuccess()) throw new PrepareError(prepared.getErrorMessage());
  return single(await connection.execute(prepared, params as Record<string, KuzuValue>));
}

/** the engine's message when it will not prepare the text, else null (the statement is dropped unrun) */
export async function prepareError(connection: Connection, text: string): Promise<string | null> {
  const prepared = await connection.prepare(text);
  return prepared.isSuccess() ? null : prepared.getErrorMessage();
}

/** every row of a prepared statement */
export async function query(connection: Connection, statement: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  const result = await execute(connection, statement, params);
  try {
    return await result.getAll();
  } finally {
    result.close();
  }
}

/** the engine would not prepare a statement: `message` is its own */
export class PrepareError extends Error {
  constructor(readonly engineMessage: string) {
    super(`graph statement failed to prepare: ${engineMessage}`);
  }
}
