/**
 * Runs a user's Cypher query on a realm's Kùzu database: decided by the
 * engine's own plan (see cypher-plan.ts), run on a connection of its own.
 *
 * - A fresh connection per query: nothing a query does to its session
 *   (settings, the internal-catalog flag a refused CALL leaves set) reaches
 *   the store's connection or the next query.
 * - The check, in transactions that are READ ONLY for callers without
 *   graph:write (the engine then refuses any writing statement before binding
 *   it): first the text must parse as a query (see QUERY_GATE), one
 *   statement; then `EXPLAIN <query>` plans it without running it, and every
 *   operator and table function of the plan must be allowed.
 * - The run: the same text, prepared again in a READ ONLY transaction for a
 *   read (a write in a plain one), with the caller's parameters.
 *
 * Binding a query reads the start of a file its LOAD FROM names (to infer
 * the columns) before the plan refuses it, so engine messages reach the
 * caller only when they come from the parser, binder or catalog (never
 * quoting a file's content). The caller serializes every call (one write
 * transaction at a time per database, prepare of a write included).
 */
import { ServiceError } from '../../errors.js';
import type { CypherResult } from '../store.js';
import { toJsonValue } from '../values.js';
import { judgePlan, readPlan, type CypherKind } from './cypher-plan.js';
import { exec, execute, openConnection, PrepareError, prepareError, type Connection, type Database, type QueryResult } from './engine.js';

export interface UserQueryOptions {
  readonly allowWrite: boolean;
  readonly timeoutMs: number;
  readonly maxRows: number;
  /** told once the query is judged a write (whether or not it then succeeds) */
  readonly onWrite: () => Promise<void>;
}

export async function runUserCypher(database: Database, query: string, params: Record<string, unknown>, options: UserQueryOptions): Promise<CypherResult> {
  refuseEngineCrashes(query);
  const connection = await openConnection(database, options.timeoutMs);
  try {
    const kind = await checkQuery(connection, query, params, options.allowWrite);
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

/**
 * The text after this must parse as the rest of a query: any other kind of
 * statement (COPY, EXPORT, IMPORT, ATTACH, USE, CALL <setting>, transactions,
 * DDL, extensions) fails the parser there, before the engine binds it (the
 * binder reads the files IMPORT and COPY FROM name) or maps its plan (which
 * for EXPORT DATABASE creates the target folder, even under EXPLAIN).
 */
const QUERY_GATE = 'UNWIND [1] AS __query_gate\n';

/**
 * Not a judgement of what the query does (the engine's plan is): Kùzu 0.11.3
 * segfaults, taking the whole process down, when it binds `show_functions`
 * in a database that holds a macro (every full-text index makes one), and
 * binding comes before any plan can be read. So a text that names it
 * anywhere (strings and comments included, any case) is refused up front.
 */
const ENGINE_CRASHES = ['show_functions'];

function refuseEngineCrashes(query: string): void {
  const text = query.normalize('NFKC').toLowerCase();
  const named = ENGINE_CRASHES.find((name) => text.includes(name));
  if (named) {
    throw new ServiceError('validation_error', `the Cypher query names ${named}, which crashes this graph engine version (Kùzu 0.11.3): refused`, {
      function: named.toUpperCase(),
    });
  }
}

/** the engine's judgement of the query: its kind, from its plan; nothing of it runs */
async function checkQuery(connection: Connection, query: string, params: Record<string, unknown>, allowWrite: boolean): Promise<CypherKind> {
  // without graph:write, the engine refuses a writing statement in a READ ONLY transaction before binding it
  const begin = allowWrite ? 'BEGIN TRANSACTION' : 'BEGIN TRANSACTION READ ONLY';
  const gated = await inTransaction(connection, begin, () => prepareError(connection, QUERY_GATE + query));
  if (gated !== null) {
    if (/^Parser exception/i.test(gated)) throw await notAQuery(connection, query);
    if (/read-only transaction|prepare multiple statements/i.test(gated)) throw compileError(gated);
    // a binder error of the gated text: the query's own plan below answers for it
  }
  return inTransaction(connection, begin, async () => {
    let result: QueryResult | null = null;
    try {
      // with the caller's parameters: the plan judged is the one that runs
      result = await execute(connection, `EXPLAIN ${query}`, params);
      const rows = await result.getAll();
      // one row, one column: the printed plan
      const plan = rows
        .map((row) =>
          Object.values(row)
            .filter((value) => typeof value === 'string')
            .join('\n'),
        )
        .join('\n');
      return judgePlan(readPlan(plan));
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (error instanceof PrepareError) throw compileError(error.engineMessage);
      throw compileError(error instanceof Error ? error.message : String(error));
    } finally {
      result?.close();
    }
  });
}

/**
 * Why a text that is not the rest of a query is refused: another kind of
 * statement when it parses alone (told by the engine refusing to prepare it
 * with a second statement, which it does before binding), else its syntax error.
 */
async function notAQuery(connection: Connection, query: string): Promise<ServiceError> {
  const alone = await prepareError(connection, `${query}\n;\nRETURN 1`);
  if (alone !== null && /^Parser exception/i.test(alone)) return new ServiceError('cypher_syntax_error', alone);
  return new ServiceError(
    'validation_error',
    'only Cypher queries run here (reads, and node/relationship writes with graph:write): COPY, LOAD, EXPORT, IMPORT, ATTACH, USE, settings, transactions, extensions and schema changes are refused',
  );
}

/** work in its own transaction, always rolled back after (a failed prepare may have ended it already) */
async function inTransaction<T>(connection: Connection, begin: string, work: () => Promise<T>): Promise<T> {
  await exec(connection, begin);
  try {
    return await work();
  } finally {
    await exec(connection, 'ROLLBACK').catch(() => undefined);
  }
}

async function runChecked(connection: Connection, query: string, params: Record<string, unknown>, kind: CypherKind, maxRows: number): Promise<CypherResult> {
  // engine-side guard as well: a read runs in a READ ONLY transaction
  await exec(connection, kind === 'read' ? 'BEGIN TRANSACTION READ ONLY' : 'BEGIN TRANSACTION');
  let result: QueryResult | null = null;
  try {
    try {
      result = await execute(connection, query, params);
    } catch (error) {
      if (error instanceof PrepareError) throw compileError(error.engineMessage);
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

const needsWrite = (): ServiceError =>
  new ServiceError('forbidden', 'this Cypher query writes to the graph: it needs the graph:write permission', { permission: 'graph:write' });

/** engine messages that quote only the query, its parameters' names and the catalog, never a file the query named */
const SHOWN_COMPILE_ERROR = /^((Parser|Binder|Catalog) exception|Parameter \S+ not found)/i;

/** a query the engine would not parse, bind or plan */
function compileError(message: string): ServiceError {
  if (/read-only transaction/i.test(message)) return needsWrite();
  if (/prepare multiple statements/i.test(message)) {
    return new ServiceError('validation_error', 'send one Cypher statement per request (the engine parsed several)');
  }
  if (SHOWN_COMPILE_ERROR.test(message)) return new ServiceError('cypher_syntax_error', message);
  return new ServiceError(
    'cypher_syntax_error',
    "the Cypher query could not be compiled (the engine's message is not shown: it may quote a file the query names)",
  );
}

function runError(message: string): ServiceError {
  if (/read-only transaction/i.test(message)) return needsWrite();
  if (/^(Parser|Binder|Catalog) exception/i.test(message)) return new ServiceError('cypher_syntax_error', message);
  return new ServiceError('validation_error', `the Cypher query failed: ${message}`);
}
