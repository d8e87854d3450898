/**
 * Where context tables live and what columns they have. Every organization
 * and realm gets its own DuckDB schema (`<org id>:<realm>`), so a query built
 * for one organization cannot name another's table. This process is the only
 * writer of the database file (DuckDB locks it), so the column cache is
 * authoritative once loaded.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './columns.js';
import { asText } from './duck-values.js';
import { KeyedRwLocks } from './rw-lock.js';

export const TARGET_TABLES = ['context_events', 'context_nodes'] as const;
export type TargetTable = (typeof TARGET_TABLES)[number];

const ORG_ID = /^[a-z0-9_]{1,64}$/;
const REALM = /^[a-z0-9_-]{1,100}$/;

/** The DuckDB schema of one organization's realm. */
export function schemaName(orgId: string, realm: string): string {
  // both are validated upstream; checked again because they become identifiers
  if (!ORG_ID.test(orgId)) throw new Error(`unexpected organization id ${JSON.stringify(orgId)}`);
  if (!REALM.test(realm)) throw new Error(`unexpected realm name ${JSON.stringify(realm)}`);
  return `${orgId}:${realm}`;
}

/** Prefix of every schema of an organization. */
const orgSchemaPrefix = (orgId: string): string => `${orgId}:`;

export const qualified = (schema: string, table: string): string => `${quoteIdent(schema)}.${quoteIdent(table)}`;

export class TableCatalog {
  private readonly columns = new Map<string, Set<string>>();
  /** bumped on every change of a table: a read that started before a change never caches its stale answer */
  private readonly generations = new Map<string, number>();
  /** per schema: its tables and their column names (what a KQL query over a realm reads before it runs) */
  private readonly schemas = new Map<string, ReadonlyMap<string, readonly string[]>>();
  /** bumped on every change of any table and on reset: a schema read that overlapped one is not kept */
  private changes = 0;
  /** shared for inserts, exclusive for CREATE / ALTER of the same table */
  readonly locks = new KeyedRwLocks();

  /** Forgets everything (the engine was reopened). */
  reset(): void {
    this.columns.clear();
    this.generations.clear();
    this.schemas.clear();
    this.changes += 1;
  }

  private invalidate(schema: string, table: string): void {
    const key = `${schema}.${table}`;
    this.columns.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
    this.schemas.delete(schema);
    this.changes += 1;
  }

  /**
   * The schema's tables with their column names in order (empty when it has none), read from DuckDB
   * once and kept until a table of the schema is created or gains a column through this catalog.
   */
  async tablesOf(connection: DuckDBConnection, schema: string): Promise<ReadonlyMap<string, readonly string[]>> {
    const cached = this.schemas.get(schema);
    if (cached) return cached;
    const changes = this.changes;
    const tables = await readSchemaTables(connection, schema);
    if (this.changes === changes) this.schemas.set(schema, tables);
    return tables;
  }

  /** The table's columns, or null when it does not exist. */
  async columnsOf(connection: DuckDBConnection, schema: string, table: string): Promise<ReadonlySet<string> | null> {
    const key = `${schema}.${table}`;
    const cached = this.columns.get(key);
    if (cached) return cached;
    const generation = this.generations.get(key) ?? 0;
    const reader = await connection.runAndReadAll(
      `SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 ORDER BY column_index`,
      [schema, table],
    );
    const names = reader.getRowsJS().map((row) => asText(row[0]));
    if (names.length === 0) return null;
    const set = new Set(names);
    if ((this.generations.get(key) ?? 0) === generation) this.columns.set(key, set);
    return set;
  }

  /** Creates the schema and the table with its default columns; idempotent. Call under the exclusive lock. */
  async createTable(connection: DuckDBConnection, schema: string, table: string): Promise<ReadonlySet<string>> {
    await connection.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await connection.run(`CREATE TABLE IF NOT EXISTS ${qualified(schema, table)} ("at" TIMESTAMPTZ NOT NULL, "label" VARCHAR, "body" VARCHAR, "props" BLOB)`);
    this.invalidate(schema, table);
    return (await this.columnsOf(connection, schema, table)) ?? new Set();
  }

  /**
   * Adds Utf8 columns in one transaction, skipping those a concurrent request
   * added first (so both requests succeed). Call under the exclusive lock.
   */
  async addColumns(connection: DuckDBConnection, schema: string, table: string, names: readonly string[]): Promise<ReadonlySet<string>> {
    const current = (await this.columnsOf(connection, schema, table)) ?? new Set<string>();
    const missing = names.filter((name) => !current.has(name));
    if (missing.length === 0) return current;
    try {
      await connection.run('BEGIN TRANSACTION');
      for (const name of missing) {
        await connection.run(`ALTER TABLE ${qualified(schema, table)} ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} VARCHAR`);
      }
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK').catch(() => undefined); // DuckDB already rolled back a failed transaction
      throw error;
    } finally {
      this.invalidate(schema, table);
    }
    return (await this.columnsOf(connection, schema, table)) ?? new Set();
  }
}

/** Every table of a schema with its column names in order, read from DuckDB's catalog. */
export async function readSchemaTables(connection: DuckDBConnection, schema: string): Promise<ReadonlyMap<string, readonly string[]>> {
  const reader = await connection.runAndReadAll(
    `SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 ORDER BY table_name, column_index`,
    [schema],
  );
  const tables = new Map<string, string[]>();
  for (const row of reader.getRowsJS()) {
    const [table, column] = row.map(asText) as [string, string];
    const list = tables.get(table);
    if (list) list.push(column);
    else tables.set(table, [column]);
  }
  return tables;
}

export interface TableInfo {
  readonly realm: string;
  readonly name: string;
  readonly columns: { readonly name: string; readonly type: string }[];
  readonly row_count: number;
}

/** Every context table of an organization (optionally one realm), with columns and exact row counts. */
export async function listTables(connection: DuckDBConnection, orgId: string, realm: string | null): Promise<TableInfo[]> {
  const prefix = orgSchemaPrefix(orgId);
  const reader = await connection.runAndReadAll(
    `SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns()
     WHERE database_name = current_database() AND starts_with(schema_name, $1) AND ($2::VARCHAR IS NULL OR schema_name = $3)
     ORDER BY schema_name, table_name, column_index`,
    [prefix, realm, realm === null ? null : schemaName(orgId, realm)],
  );
  const tables = new Map<string, { realm: string; name: string; schema: string; columns: { name: string; type: string }[] }>();
  for (const row of reader.getRowsJS()) {
    const [schema, table, column, type] = row.map(asText) as [string, string, string, string];
    const key = `${schema}.${table}`;
    let entry = tables.get(key);
    if (!entry) {
      entry = { realm: schema.slice(prefix.length), name: table, schema, columns: [] };
      tables.set(key, entry);
    }
    entry.columns.push({ name: column, type: duckTypeName(type) });
  }
  const result: TableInfo[] = [];
  for (const entry of tables.values()) {
    const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${qualified(entry.schema, entry.name)}`);
    result.push({ realm: entry.realm, name: entry.name, columns: entry.columns, row_count: Number(counted.getRowsJS()[0]?.[0] ?? 0) });
  }
  return result;
}

/** Column types as users read them: Arrow-style names for the types context tables use. */
function duckTypeName(type: string): string {
  switch (type) {
    case 'VARCHAR':
      return 'utf8';
    case 'BLOB':
      return 'binary';
    case 'TIMESTAMP WITH TIME ZONE':
      return 'timestamp';
    default:
      return type.toLowerCase();
  }
}
