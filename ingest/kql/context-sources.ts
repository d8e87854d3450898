/**
 * The tables a KQL query over one realm can name: exactly the tables of the
 * realm's own DuckDB schema (`<org id>:<realm>`), plus empty `context_events`
 * and `context_nodes` while ingest has not created them. Each becomes a
 * quoted, schema-qualified name; the analyzer sees only these.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../columns.js';
import { asText } from '../duck-values.js';
import { qualified, schemaName, TARGET_TABLES } from '../table-catalog.js';
import type { SourceTable } from './translate.js';

const DEFAULT_COLUMNS = [
  { name: 'at', type: 'datetime', sql: `timezone('UTC', "at")` },
  { name: 'label', type: 'string', sql: '"label"' },
  { name: 'body', type: 'string', sql: '"body"' },
  { name: 'props', type: 'dynamic', sql: `CAST(decode("props") AS JSON)` },
];

function columnOf(name: string): SourceTable['columns'][number] {
  return DEFAULT_COLUMNS.find((column) => column.name === name) ?? { name, type: 'string', sql: quoteIdent(name) };
}

export async function realmSources(connection: DuckDBConnection, orgId: string, realm: string): Promise<SourceTable[]> {
  const schema = schemaName(orgId, realm);
  // names only (no row counts: this runs before every query)
  const reader = await connection.runAndReadAll(
    `SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 ORDER BY table_name, column_index`,
    [schema],
  );
  const columns = new Map<string, string[]>();
  for (const row of reader.getRowsJS()) {
    const [table, column] = row.map(asText) as [string, string];
    const list = columns.get(table);
    if (list) list.push(column);
    else columns.set(table, [column]);
  }
  const sources: SourceTable[] = [...columns].map(([name, names]) => ({
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
  return sources;
}
