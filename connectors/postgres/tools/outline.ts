/** postgres outline for the sync: every table of the user schemas with its columns (primary key marked) and foreign keys. */
import type { SqlSession, TableOutline } from '../../shared/sql/engine.js';
import { RELKIND, USER_SCHEMAS } from './list-schemas.js';

const KEYS = (keys: string, table: string) =>
  `ARRAY(SELECT a.attname FROM unnest(${keys}) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = ${table} AND a.attnum = k.n ORDER BY k.i)::text[]`;

export async function outline(session: SqlSession): Promise<{ database: string; tables: TableOutline[] }> {
  const [database] = await session.rows('SELECT current_database() AS name');
  const columns = await session.rows(
    `SELECT n.nspname AS schema, c.relname AS table, ${RELKIND} AS kind, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
            EXISTS (SELECT 1 FROM pg_index ix WHERE ix.indrelid = c.oid AND ix.indisprimary AND a.attnum = ANY (ix.indkey)) AS primary_key
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${USER_SCHEMAS}
      ORDER BY 1, 2, a.attnum`,
  );
  const foreignKeys = await session.rows(
    `SELECT n.nspname AS schema, c.relname AS table, con.conname AS name, ${KEYS('con.conkey', 'con.conrelid')} AS columns,
            fn.nspname AS ref_schema, fc.relname AS ref_table, ${KEYS('con.confkey', 'con.confrelid')} AS ref_columns
       FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_class fc ON fc.oid = con.confrelid JOIN pg_namespace fn ON fn.oid = fc.relnamespace
      WHERE con.contype = 'f' AND ${USER_SCHEMAS} ORDER BY 1, 2, 3`,
  );
  const tables = new Map<string, { -readonly [K in keyof TableOutline]: TableOutline[K] }>();
  const keyOf = (row: Record<string, unknown>): string => `${String(row['schema'])}.${String(row['table'])}`;
  for (const row of columns) {
    const key = keyOf(row);
    const table = tables.get(key) ?? { schema: String(row['schema']), name: String(row['table']), kind: String(row['kind']), columns: [], foreign_keys: [] };
    table.columns = [
      ...table.columns,
      { name: String(row['name']), type: String(row['type']), nullable: row['nullable'] === true, primary_key: row['primary_key'] === true },
    ];
    tables.set(key, table);
  }
  for (const row of foreignKeys) {
    const table = tables.get(keyOf(row));
    if (!table) continue;
    table.foreign_keys = [
      ...table.foreign_keys,
      {
        name: String(row['name']),
        columns: row['columns'] as string[],
        references: { schema: String(row['ref_schema']), table: String(row['ref_table']), columns: row['ref_columns'] as string[] },
      },
    ];
  }
  return { database: typeof database?.['name'] === 'string' ? database['name'] : '', tables: [...tables.values()] };
}
