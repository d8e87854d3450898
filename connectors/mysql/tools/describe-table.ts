/** mysql describe_table: columns, primary key, foreign keys (both ways) and indexes of one table, from information_schema. */
import { ToolError } from '../../contract.js';
import type { SqlSession } from '../../shared/sql/engine.js';

type Row = Record<string, unknown>;

/** KEY_COLUMN_USAGE rows (one per column) grouped into one entry per constraint */
export function groupKeys(rows: readonly Row[], side: 'from' | 'to') {
  const byName = new Map<
    string,
    { name: string; schema: string; table: string; columns: string[]; references: { schema: string; table: string; columns: string[] } }
  >();
  for (const row of rows) {
    const id = `${String(row['schema'])}.${String(row['table'])}.${String(row['name'])}`;
    const entry = byName.get(id) ?? {
      name: String(row['name']),
      schema: String(row['schema']),
      table: String(row['table']),
      columns: [],
      references: { schema: String(row['ref_schema']), table: String(row['ref_table']), columns: [] },
    };
    entry.columns.push(String(row['column']));
    entry.references.columns.push(String(row['ref_column']));
    byName.set(id, entry);
  }
  return [...byName.values()].map(({ name, schema, table, columns, references }) =>
    side === 'from' ? { name, columns, references } : { name, schema, table, columns, referenced_columns: references.columns },
  );
}

export const KEY_USAGE = `SELECT CONSTRAINT_NAME AS name, TABLE_SCHEMA AS \`schema\`, TABLE_NAME AS \`table\`, COLUMN_NAME AS \`column\`,
    REFERENCED_TABLE_SCHEMA AS ref_schema, REFERENCED_TABLE_NAME AS ref_table, REFERENCED_COLUMN_NAME AS ref_column
  FROM information_schema.KEY_COLUMN_USAGE`;

export async function describeTable(session: SqlSession, schema: string | null, table: string): Promise<unknown> {
  const [current] = await session.rows('SELECT DATABASE() AS name');
  const database = schema ?? (current?.['name'] as string | null | undefined) ?? null;
  if (database === null) throw new ToolError('invalid_arguments', 'the source names no database: give `schema`', { field: 'schema' });
  const [found] = await session.rows('SELECT TABLE_TYPE AS kind FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [database, table]);
  if (found === undefined) throw new ToolError('not_found', `no table ${database}.${table} (list_schemas names the tables)`, { schema: database, table });
  const columns = await session.rows(
    `SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS \`default\`, COLUMN_KEY AS \`key\`, EXTRA AS extra
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [database, table],
  );
  const outgoing = await session.rows(
    `${KEY_USAGE} WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION`,
    [database, table],
  );
  const incoming = await session.rows(
    `${KEY_USAGE} WHERE REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ? ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
    [database, table],
  );
  const indexes = await session.rows(
    `SELECT INDEX_NAME AS name, NON_UNIQUE AS non_unique, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS columns, INDEX_TYPE AS type
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY INDEX_NAME, NON_UNIQUE, INDEX_TYPE ORDER BY INDEX_NAME`,
    [database, table],
  );
  return {
    schema: database,
    table,
    kind: String(found['kind']).toLowerCase(),
    columns: columns.map((c) => ({ name: c['name'], type: c['type'], nullable: c['nullable'] === 'YES', default: c['default'], extra: c['extra'] || null })),
    primary_key: columns.filter((c) => c['key'] === 'PRI').map((c) => c['name']),
    foreign_keys: groupKeys(outgoing, 'from'),
    referenced_by: groupKeys(incoming, 'to'),
    indexes: indexes.map((i) => ({
      name: i['name'],
      unique: Number(i['non_unique']) === 0,
      primary: i['name'] === 'PRIMARY',
      columns: String(i['columns']).split(','),
      type: i['type'],
    })),
  };
}
