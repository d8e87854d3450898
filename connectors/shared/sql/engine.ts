/**
 * What a SQL connector (`postgres`, `mysql`) provides to the shared tool
 * definitions (./tools.ts) and sync (./sync.ts): a read-only session on the
 * source's pool, and per tool the engine's own catalog queries.
 */
import type { ToolContext } from '../../contract.js';
import type { SqlConnection } from './config.js';

interface QueryColumn {
  readonly name: string;
  readonly type: string;
}

/** the answer of `query`: rows as arrays in column order */
export interface QueryResult {
  readonly columns: readonly QueryColumn[];
  readonly rows: readonly unknown[][];
  readonly row_count: number;
  readonly truncated: boolean;
}

export interface SqlSession {
  readonly connection: SqlConnection;
  /** the connector's own catalog statement, rows as objects */
  rows(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** one caller-given statement, parameters bound by the server, at most `limit` rows kept */
  query(sql: string, params: readonly unknown[], limit: number): Promise<QueryResult>;
}

/** A schema's tables, for the sync */
export interface TableOutline {
  readonly schema: string;
  readonly name: string;
  readonly kind: string;
  readonly columns: readonly { readonly name: string; readonly type: string; readonly nullable: boolean; readonly primary_key: boolean }[];
  readonly foreign_keys: readonly {
    readonly name: string;
    readonly columns: readonly string[];
    readonly references: { readonly schema: string; readonly table: string; readonly columns: readonly string[] };
  }[];
}

export interface SqlEngine {
  /** `postgres` / `mysql` */
  readonly kind: string;
  /** what the model reads in descriptions, e.g. `PostgreSQL` */
  readonly label: string;
  /** `$1, $2` or `?` */
  readonly placeholder: string;
  /**
   * Runs `work` in a READ ONLY transaction on a pooled connection of the
   * source, with the config's statement timeout, and rolls it back. Driver
   * errors come out as ToolErrors. Without a `sourceId` (validation) a
   * single connection is opened and closed instead.
   */
  readOnly<T>(ctx: Pick<ToolContext, 'sourceId' | 'config' | 'signal' | 'net'>, work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** for validation: the server's version, and that this transaction is read-only */
  serverFacts(session: SqlSession): Promise<{ server_version: string; read_only: boolean } & Record<string, unknown>>;
  listSchemas(session: SqlSession): Promise<unknown>;
  describeTable(session: SqlSession, schema: string | null, table: string): Promise<unknown>;
  explain(session: SqlSession, sql: string, params: readonly unknown[]): Promise<unknown>;
  slowQueries(session: SqlSession, limit: number, minDurationMs: number): Promise<unknown>;
  locks(session: SqlSession): Promise<unknown>;
  connections(session: SqlSession): Promise<unknown>;
  /** every table of the schemas a sync reads (all but the system ones) */
  outline(session: SqlSession): Promise<{ database: string; tables: TableOutline[] }>;
  /** closes every pool (shutdown) */
  close(): Promise<void>;
  /** closes one source's pool (deleted or changed) */
  release(sourceId: string): Promise<void>;
}

/** What an engine's session manager provides (pools, the read-only transaction). */
export type SqlSessions = Pick<SqlEngine, 'readOnly' | 'release' | 'close'>;

/** An engine from its session manager and its catalog queries. */
export const sqlEngine = (sessions: SqlSessions, queries: Omit<SqlEngine, keyof SqlSessions>): SqlEngine => ({
  ...queries,
  readOnly: (ctx, work) => sessions.readOnly(ctx, work),
  release: (sourceId) => sessions.release(sourceId),
  close: () => sessions.close(),
});

/** list_schemas' answer: each schema with its tables, cut at `max` tables in all */
export function schemasWithTables(database: unknown, schemas: readonly Record<string, unknown>[], tables: readonly Record<string, unknown>[], max: number) {
  const kept = tables.slice(0, max);
  return {
    database: database ?? null,
    schemas: schemas.map((schema) => ({
      name: schema['name'],
      tables: kept.filter((t) => t['schema'] === schema['name']).map(({ name, kind, estimated_rows }) => ({ name, kind, estimated_rows })),
    })),
    truncated: tables.length > max,
  };
}
