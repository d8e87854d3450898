/** postgres list_schemas: the schemas of the database with their tables and views (estimated rows from the planner's statistics). */
import { schemasWithTables, type SqlSession } from '../../shared/sql/engine.js';

const MAX_TABLES = 2000;

export const USER_SCHEMAS = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'";
export const RELKIND =
  "CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' END";

export async function listSchemas(session: SqlSession): Promise<unknown> {
  const [current] = await session.rows('SELECT current_database() AS name');
  const schemas = await session.rows(`SELECT n.nspname AS name FROM pg_namespace n WHERE ${USER_SCHEMAS} ORDER BY 1`);
  const tables = await session.rows(
    `SELECT n.nspname AS schema, c.relname AS name, ${RELKIND} AS kind, GREATEST(c.reltuples, 0)::bigint AS estimated_rows
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${USER_SCHEMAS}
      ORDER BY 1, 2 LIMIT ${MAX_TABLES + 1}`,
  );
  return schemasWithTables(current?.['name'], schemas, tables, MAX_TABLES);
}
