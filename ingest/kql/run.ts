/**
 * One KQL query end to end on a DuckDB connection: analyze (with the tables'
 * schemas, so unknown names are errors), translate, run under a timeout
 * (`interrupt()` stops DuckDB), and turn the values into JSON.
 *
 * Analysis costs milliseconds to tens of milliseconds per query (more than
 * DuckDB needs for many of them), so a translation is kept, by query text,
 * row limit and the schema of the tables it was analyzed against (names,
 * columns, types and the SQL reading them, which include the realm's schema
 * name): a new column or table is a new key, so a stale translation is never
 * reused. Least recently used entries are dropped past `COMPILED_KEPT`. Each
 * connection keeps the statements it prepared from translations, so a repeated
 * query skips DuckDB's parse and plan as well.
 */
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { ServiceError } from '../../runtime/errors.js';
import { analyze, schemaKey, type TableSchema } from './kusto.js';
import { formatTimespan } from './sql-text.js';
import { translate, type SourceTable } from './translate.js';

export interface KqlResult {
  readonly columns: { name: string; type: string }[];
  readonly rows: unknown[][];
  readonly stats: { row_count: number; truncated: boolean; elapsed_ms: number; chart: string | null };
  /** the DuckDB SQL that ran (for benchmarks and debugging; not part of the HTTP answer) */
  readonly sql: string;
}

export interface KqlOptions {
  readonly limit: number;
  readonly timeoutMs: number;
}

interface Compiled {
  readonly sql: string;
  readonly columns: { name: string; type: string }[];
  readonly chart: string | null;
  readonly ordered: boolean;
}

/**
 * DuckDB runs a LIMIT of at most this many rows in parallel and keeps the
 * insertion order; above it, a LIMIT that keeps the order runs on one thread
 * (the default limit, 10,000 rows + 1 to tell truncation, is above it). A
 * result without an order of the query's own is Kusto's answer in any order,
 * so its session drops the insertion order while it runs (1.6x on a filter
 * over 1M rows).
 */
const PARALLEL_LIMIT_ROWS = 10_000;

/** Most translations kept (a few kB each). */
const COMPILED_KEPT = 512;
const compiledCache = new Map<string, Compiled>();
const counts = { hits: 0, misses: 0 };

/** How often a translation was reused (`hits`) or made (`misses`), and how many are kept. */
export const kqlCompileStats = (): { hits: number; misses: number; kept: number } => ({ ...counts, kept: compiledCache.size });

interface Keyed {
  readonly schemas: TableSchema[];
  readonly key: string;
  /** the schema key and the SQL reading each table and column */
  readonly prefix: string;
}

/** The keys of a table list, made once per list (the realm's list is kept until its schema changes). */
const keyedLists = new WeakMap<readonly SourceTable[], Keyed>();

function keyed(tables: readonly SourceTable[]): Keyed {
  const known = keyedLists.get(tables);
  if (known) return known;
  const schemas: TableSchema[] = tables.map((table) => ({ name: table.name, columns: table.columns }));
  const key = schemaKey(schemas);
  const prefix = `${JSON.stringify(tables.map((table) => [table.qualified, table.columns.map((column) => column.sql)]))}\u0000${key}`;
  const made = { schemas, key, prefix };
  keyedLists.set(tables, made);
  return made;
}

/** Parses, checks and translates (or reuses the translation of the same query over the same schema); throws `kql_error` with line and column. */
function compileKql(query: string, tables: readonly SourceTable[], limit: number): Compiled {
  const { schemas, key, prefix } = keyed(tables);
  const cacheKey = `${prefix}\u0000${limit}\u0000${query}`;
  const cached = compiledCache.get(cacheKey);
  if (cached) {
    compiledCache.delete(cacheKey);
    compiledCache.set(cacheKey, cached);
    counts.hits += 1;
    return cached;
  }
  counts.misses += 1;
  const analyzed = analyze(query, schemas, key);
  const first = analyzed.errors[0];
  if (first) {
    throw new ServiceError('kql_error', `${first.message} (line ${first.line}, column ${first.column})`, {
      line: first.line,
      column: first.column,
      code: first.code,
      errors: analyzed.errors.slice(0, 10),
    });
  }
  const translation = translate(analyzed, new Map(tables.map((table) => [table.name, table])), limit);
  const compiled: Compiled = { sql: translation.sql, columns: translation.columns, chart: translation.chart, ordered: translation.ordered };
  compiledCache.set(cacheKey, compiled);
  if (compiledCache.size > COMPILED_KEPT) compiledCache.delete(compiledCache.keys().next().value as string);
  return compiled;
}

/** Most prepared statements kept per connection. */
const PREPARED_KEPT = 64;
const preparedBy = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/**
 * The connection's prepared statement for `sql`, kept (least recently used dropped past
 * `PREPARED_KEPT`): DuckDB's parse, bind and plan of a translation's CTE chain cost about a
 * millisecond, as much as running a small query. DuckDB binds a kept statement again by itself
 * when the catalog changed since it was prepared.
 */
async function preparedFor(connection: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
  let kept = preparedBy.get(connection);
  if (!kept) {
    kept = new Map();
    preparedBy.set(connection, kept);
  }
  const found = kept.get(sql);
  if (found) {
    kept.delete(sql);
    kept.set(sql, found);
    return found;
  }
  const prepared = await connection.prepare(sql);
  kept.set(sql, prepared);
  if (kept.size > PREPARED_KEPT) {
    const [oldest, statement] = kept.entries().next().value as [string, DuckDBPreparedStatement];
    kept.delete(oldest);
    statement.destroySync();
  }
  return prepared;
}

function present(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'long':
    case 'int':
      if (typeof value === 'bigint')
        return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
      return value;
    case 'timespan':
      return formatTimespan(BigInt(value as bigint | number));
    case 'real':
    case 'decimal': {
      const number = Number(value);
      if (Number.isNaN(number)) return 'NaN';
      if (!Number.isFinite(number)) return number > 0 ? 'Infinity' : '-Infinity';
      return number;
    }
    case 'dynamic':
      return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
    case 'bool':
      return Boolean(value);
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

export async function runKql(connection: DuckDBConnection, query: string, tables: readonly SourceTable[], options: KqlOptions): Promise<KqlResult> {
  const started = performance.now();
  const compiled = compileKql(query, tables, options.limit + 1);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, options.timeoutMs);
  let raw: unknown[][];
  const anyOrder = !compiled.ordered && options.limit + 1 > PARALLEL_LIMIT_ROWS;
  try {
    if (anyOrder) await connection.run('SET SESSION preserve_insertion_order = false');
    raw = (await (await preparedFor(connection, compiled.sql)).runAndReadAll()).getRowsJS();
  } catch (error) {
    if (timedOut)
      throw new ServiceError('query_timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`, { timeout_ms: options.timeoutMs });
    const message = (error as Error).message.split('\n')[0] ?? 'query failed';
    if (/^(Out of Memory|IO|FATAL) Error/.test(message)) throw error;
    throw new ServiceError('kql_error', `the query failed while running: ${message}`, { stage: 'execution' });
  } finally {
    clearTimeout(timer);
    if (anyOrder) await connection.run('SET SESSION preserve_insertion_order = true');
  }
  const truncated = raw.length > options.limit;
  const rows = raw.slice(0, options.limit).map((row) => compiled.columns.map((column, index) => present(row[index], column.type)));
  return {
    columns: compiled.columns.map((column) => ({ ...column })),
    rows,
    stats: { row_count: rows.length, truncated, elapsed_ms: Math.round(performance.now() - started), chart: compiled.chart },
    sql: compiled.sql,
  };
}
