/** mysql outline for the sync: the tables of the source's database (or of every non-system schema) with columns and foreign keys. */
import type { SqlSession, TableOutline } from '../../shared/sql/engine.js';
import { groupKeys, KEY_USAGE } from './describe-table.js';
import { SYSTEM_SCHEMAS } from './list-schemas.js';

export async function outline(session: SqlSession): Promise<{ database: string; tables: TableOutline[] }> {
  const [current] = await session.rows('SELECT DATABASE() AS name');
  const database = (current?.['name'] as string | null | undefined) ?? null;
  const scope = database === null ? { where: `NOT IN ${SYSTEM_SCHEMAS}`, params: [] } : { where: '= ?', params: [database] };
  const tables = await session.rows(
    `SELECT TABLE_SCHEMA AS \`schema\`, TABLE_NAME AS name, LOWER(TABLE_TYPE) AS kind FROM information_schema.TABLES WHERE TABLE_SCHEMA ${scope.where} ORDER BY 1, 2`,
    scope.params,
  );
  const columns = await session.rows(
    `SELECT TABLE_SCHEMA AS \`schema\`, TABLE_NAME AS \`table\`, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_KEY AS \`key\`
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA ${scope.where} ORDER BY 1, 2, ORDINAL_POSITION`,
    scope.params,
  );
  const keys = await session.rows(
    `${KEY_USAGE} WHERE TABLE_SCHEMA ${scope.where} AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
    scope.params,
  );
  const id = (schema: unknown, table: unknown): string => `${String(schema)}.${String(table)}`;
  const columnsOf = new Map<string, TableOutline['columns'][number][]>();
  for (const c of columns) {
    const list = columnsOf.get(id(c['schema'], c['table'])) ?? [];
    list.push({ name: String(c['name']), type: String(c['type']), nullable: c['nullable'] === 'YES', primary_key: c['key'] === 'PRI' });
    columnsOf.set(id(c['schema'], c['table']), list);
  }
  const keysOf = new Map<string, Record<string, unknown>[]>();
  for (const k of keys) keysOf.set(id(k['schema'], k['table']), [...(keysOf.get(id(k['schema'], k['table'])) ?? []), k]);
  return {
    database: database ?? '',
    tables: tables.map((t) => ({
      schema: String(t['schema']),
      name: String(t['name']),
      kind: String(t['kind']),
      columns: columnsOf.get(id(t['schema'], t['name'])) ?? [],
      foreign_keys: groupKeys(keysOf.get(id(t['schema'], t['name'])) ?? [], 'from') as TableOutline['foreign_keys'],
    })),
  };
}
