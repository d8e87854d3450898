/** postgres explain: `EXPLAIN (FORMAT JSON)` of one statement, planned but not run (parameters bound, so the plan is the generic one). */
import { ToolError } from '../../contract.js';
import type { SqlSession } from '../../shared/sql/engine.js';

export async function explain(session: SqlSession, sql: string, params: readonly unknown[]): Promise<unknown> {
  // the extended protocol refuses a second statement after the first, so the prefix cannot be escaped
  const result = await session.query(`EXPLAIN (FORMAT JSON, VERBOSE) ${sql}`, params, 1);
  const cell = result.rows[0]?.[0];
  const document = typeof cell === 'string' ? (JSON.parse(cell) as unknown) : cell;
  if (!Array.isArray(document)) throw new ToolError('query_failed', 'PostgreSQL gave no plan for this statement');
  const plan: unknown = document[0];
  return { format: 'json', plan };
}
