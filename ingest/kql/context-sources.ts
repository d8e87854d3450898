/**
 * The tables a KQL query over one realm can name: exactly the tables of the
 * realm's own DuckDB schema (`<org id>:<realm>`), plus empty `context_events`
 * and `context_nodes` while ingest has not created them. Each becomes a
 * quoted, schema-qualified name; the analyzer sees only these.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../columns.js';
import { qualified, readSchemaTables, schemaName, TARGET_TABLES, type TableCatalog } from '../table-catalog.js';
import type { SourceTable } from './translate.js';

const DEFAULT_COLUMNS = [
  // the UTC wall clock of the TIMESTAMPTZ: the same value as timezone('UTC', "at"), but plain
  // arithmetic on the stored microseconds (the ICU conversion cost ~60 ms per 200k rows, paid on
  // every row a query reads before it filters)
  { name: 'at', type: 'datetime', sql: `make_timestamp(epoch_us("at"))` },
  { name: 'label', type: 'string', sql: '"label"' },
  { name: 'body', type: 'string', sql: '"body"' },
  { name: 'props', type: 'dynamic', sql: `CAST(decode("props") AS JSON)` },
];

function columnOf(name: string): SourceTable['columns'][number] {
  return DEFAULT_COLUMNS.find((column) => column.name === name) ?? { name, type: 'string', sql: quoteIdent(name) };
}

/** The realm's tables as SourceTables, built once per schema read (the catalog keeps the read). */
const built = new WeakMap<ReadonlyMap<string, readonly string[]>, SourceTable[]>();

/**
 * The realm's tables: through `catalog` (kept until ingest creates a table or a column) as the
 * service does for every query, or read from DuckDB each time without one.
 */
export async function realmSources(connection: DuckDBConnection, orgId: string, realm: string, catalog?: TableCatalog): Promise<readonly SourceTable[]> {
  const schema = schemaName(orgId, realm);
  const tables = catalog ? await catalog.tablesOf(connection, schema) : await readSchemaTables(connection, schema);
  const known = built.get(tables);
  if (known) return known;
  const sources: SourceTable[] = [...tables].map(([name, names]) => ({
    name,
    qualified: qualified(schema, name),
    columns: names.map(columnOf),
  }));
  for (const name of TARGET_TABLES) {
    if (sources.some((source) => source.name === name)) continue;
    sources.push({
      name,
      qualified: `(SELECT CAST(NULL AS TIMESTAMPTZ) AS "at", CAST(NULL AS VARCHAR) AS "label", CAST(NULL AS VARCHAR) AS "body", CAST(NULL AS BLOB) AS "props" WHERE FALSE)`,
      columns: DEFAULT_COLUMNS,
    });
  }
  built.set(tables, sources);
  return sources;
}
