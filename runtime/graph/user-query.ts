/**
 * Runs a user's Cypher query on a realm's Kùzu database: decided by the
 * engine's own plan (see cypher-plan.ts), run on a connection of its own.
 *
 * - A fresh connection per query: nothing a query does to its session
 *   (settings, the internal-catalog flag a refused CALL leaves set) reaches
 *   the store's connection or the next query.
 * - The check: `EXPLAIN <query>` in a transaction, READ ONLY for callers
 *   without graph:write, so the engine refuses any writing statement there
 *   before binding it; EXPLAIN plans the query without running it. Then the
 *   plan's operators and table functions must all be allowed.
 * - The run: the same text, prepared again in a READ ONLY transaction for a
 *   read (a write in a plain one), with the caller's parameters.
 *
 * Binding a query can read a file it names (LOAD FROM, COPY FROM sniff it)
 * even when it is then refused, so engine messages reach the caller only
 * when they come from the parser, binder or catalog (never quoting a file's
 * content). The caller serializes every call (one write transaction at a
 * time per database, prepare of a write included).
 */
import kuzu from 'kuzu';
import type { Connection, Database, KuzuValue, QueryResult } from 'kuzu';
import { ServiceError } from '../errors.js';
import { judgePlan, readPlan, type CypherKind } from './cypher-plan.js';
import type { CypherResult } from './store.js';
import { toJsonValue } from './values.js';

export interface UserQueryOptions {
  readonly allowWrite: boolean;
  readonly timeoutMs: number;
  readonly maxRows: number;
  /** told once the query is judged a write (whether or not it then succeeds) */
  readonly onWrite: () => Promise<void>;
}

export async function runUserCypher(database: Database, query: string, params: Record<string, unknown>, options: UserQueryOptions): Promise<CypherResult> {
  const connection = new kuzu.Connection(database);
  await connection.init();
  try {
    connection.setQueryTimeout(options.timeoutMs);
    const kind = await checkQuery(connection, query, options.allowWrite);
    if (kind === 'write' && !options.allowWrite) throw needsWrite();
    try {
      return await runChecked(connection, query, params, kind, options.maxRows);
    } finally {
      if (kind === 'write') await options.onWrite();
    }
  } finally {
    await connection.close();
  }
}

/** the engine's plan of the query, judged; nothing of it runs */
async function checkQuery(connection: Connection, query: string, allowWrite: boolean): Promise<CypherKind> {
  await exec(connection, allowWrite ? 'BEGIN TRANSACTION' : 'BEGIN TRANSACTION READ ONLY');
  let result: QueryResult | null = null;
  try {
    const explained = await connection.prepare(`EXPLAIN ${query}`);
    if (!explained.isSuccess()) throw compileError(explained.getErrorMessage());
    result = single(await connection.execute(explained, {}));
    const rows = await result.getAll();
    // one row, one column: the printed plan
    const plan = rows.map((row) => Object.values(row).filter((value) => typeof value === 'string').join('\n')).join('\n');
    return judgePlan(readPlan(plan));
  } finally {
    result?.close();
    // a failed prepare may have ended the transaction already
    await exec(connection, 'ROLLBACK').catch(() => undefined);
  }
}

async function runChecked(connection: Connection, query: string, params: Record<string, unknown>, kind: CypherKind, maxRows: number): Promise<CypherResult> {
  // engine-side guard as well: a read runs in a READ ONLY transaction
  await exec(connection, kind === 'read' ? 'BEGIN TRANSACTION READ ONLY' : 'BEGIN TRANSACTION');
  let result: QueryResult | null = null;
  try {
    const prepared = await connection.prepare(query);
    if (!prepared.isSuccess()) throw compileError(prepared.getErrorMessage());
    try {
      result = single(await connection.execute(prepared, params as Record<string, KuzuValue>));
    } catch (error) {
      throw runError(error instanceof Error ? error.message : String(error));
    }
    const columns = await result.getColumnNames();
    const rows: Record<string, unknown>[] = [];
    while (rows.length < maxRows && result.hasNext()) {
      const row = await result.getNext();
      if (!row) break;
      rows.push(Object.fromEntries(columns.map((column) => [column, toJsonValue(row[column])])));
    }
    await exec(connection, 'COMMIT');
    return { columns, rows };
  } catch (error) {
    await exec(connection, 'ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    result?.close();
  }
}

async function exec(connection: Connection, statement: string): Promise<void> {
  single(await connection.query(statement)).close();
}

function single(result: QueryResult | QueryResult[]): QueryResult {
  if (Array.isArray(result)) {
    for (const extra of result.slice(1)) extra.close();
    return result[0]!;
  }
  return result;
}

const needsWrite = (): ServiceError =>
  new ServiceError('forbidden', 'this Cypher query writes to the graph: it needs the graph:write permission', { permission: 'graph:write' });

/** engine messages that quote only the query and the catalog, never a file the query named */
const SHOWN_COMPILE_ERROR = /^(Parser|Binder|Catalog) exception/i;

/** a query the engine would not parse, bind or plan */
function compileError(message: string): ServiceError {
  if (/read-only transaction/i.test(message)) return needsWrite();
  if (/prepare multiple statements/i.test(message)) {
    return new ServiceError('validation_error', 'send one Cypher statement per request (the engine parsed several)');
  }
  if (SHOWN_COMPILE_ERROR.test(message)) return new ServiceError('cypher_syntax_error', message);
  return new ServiceError('cypher_syntax_error', 'the Cypher query could not be compiled (the engine\'s message is not shown: it may quote a file the query names)');
}

function runError(message: string): ServiceError {
  if (/read-only transaction/i.test(message)) return needsWrite();
  if (/^(Parser|Binder|Catalog) exception/i.test(message)) return new ServiceError('cypher_syntax_error', message);
  return new ServiceError('validation_error', `the Cypher query failed: ${message}`);
}
