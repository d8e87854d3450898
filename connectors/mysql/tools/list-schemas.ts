/** mysql list_schemas: the databases (schemas) the user can see with their tables and views (estimated rows from the storage engine). */
import { schemasWithTables, type SqlSession } from '../../shared/sql/engine.js';

const MAX_TABLES = 2000;
export const SYSTEM_SCHEMAS = "('mysql', 'information_schema', 'performance_schema', 'sys')";

export async function listSchemas(session: SqlSession): Promise<unknown> {
  const [current] = await session.rows('SELECT DATABASE() AS name');
  const schemas = await session.rows(`SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ${SYSTEM_SCHEMAS} ORDER BY 1`);
  const tables = await session.rows(
    `SELECT TABLE_SCHEMA AS \`schema\`, TABLE_NAME AS name, LOWER(TABLE_TYPE) AS kind, TABLE_ROWS AS estimated_rows
       FROM information_schema.TABLES WHERE TABLE_SCHEMA NOT IN ${SYSTEM_SCHEMAS} ORDER BY 1, 2 LIMIT ${MAX_TABLES + 1}`,
  );
  return schemasWithTables(current?.['name'], schemas, tables, MAX_TABLES);
}
