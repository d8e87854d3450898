/** postgres describe_table: columns, primary key, foreign keys (both ways), unique constraints and indexes of one table. */
import { ToolError } from '../../contract.js';
import type { SqlSession } from '../../shared/sql/engine.js';

const KEY_COLUMNS = (keys: string, table: string) =>
  `ARRAY(SELECT a.attname FROM unnest(${keys}) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = ${table} AND a.attnum = k.n ORDER BY k.i)::text[]`;

export async function describeTable(session: SqlSession, schema: string | null, table: string): Promise<unknown> {
  const [found] = await session.rows(
    "SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(format('%I.%I', $1::text, $2::text))",
    [schema ?? 'public', table],
  );
  if (found === undefined)
    throw new ToolError('not_found', `no table ${schema ?? 'public'}.${table} (list_schemas names the tables)`, { schema: schema ?? 'public', table });
  const oid = found['oid'] as number;
  const columns = await session.rows(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [oid],
  );
  const constraints = await session.rows(
    `SELECT con.conname AS name, con.contype AS type, ${KEY_COLUMNS('con.conkey', 'con.conrelid')} AS columns,
            fn.nspname AS ref_schema, fc.relname AS ref_table, ${KEY_COLUMNS('con.confkey', 'con.confrelid')} AS ref_columns
       FROM pg_constraint con LEFT JOIN pg_class fc ON fc.oid = con.confrelid LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
      WHERE con.conrelid = $1 AND con.contype IN ('p', 'f', 'u') ORDER BY con.conname`,
    [oid],
  );
  const referencedBy = await session.rows(
    `SELECT con.conname AS name, n.nspname AS schema, c.relname AS table, ${KEY_COLUMNS('con.conkey', 'con.conrelid')} AS columns, ${KEY_COLUMNS('con.confkey', 'con.confrelid')} AS referenced_columns
       FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE con.confrelid = $1 AND con.contype = 'f' ORDER BY 2, 3, 1`,
    [oid],
  );
  const indexes = await session.rows(
    `SELECT i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary, pg_get_indexdef(ix.indexrelid) AS definition
       FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid WHERE ix.indrelid = $1 ORDER BY i.relname`,
    [oid],
  );
  const primary = constraints.find((c) => c['type'] === 'p');
  return {
    schema: found['schema'],
    table: found['name'],
    columns,
    primary_key: primary ? primary['columns'] : [],
    foreign_keys: constraints
      .filter((c) => c['type'] === 'f')
      .map((c) => ({
        name: c['name'],
        columns: c['columns'],
        references: { schema: c['ref_schema'], table: c['ref_table'], columns: c['ref_columns'] },
      })),
    referenced_by: referencedBy,
    unique_constraints: constraints.filter((c) => c['type'] === 'u').map((c) => ({ name: c['name'], columns: c['columns'] })),
    indexes,
  };
}
