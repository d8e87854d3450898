/** mysql explain: `EXPLAIN FORMAT=JSON` of one statement, planned but not run. */
import { ToolError } from '../../contract.js';
import type { SqlSession } from '../../shared/sql/engine.js';

export async function explain(session: SqlSession, sql: string, params: readonly unknown[]): Promise<unknown> {
  // prepared: a text holding a second statement does not prepare, so the prefix cannot be escaped
  const result = await session.query(`EXPLAIN FORMAT=JSON ${sql}`, params, 1);
  const cell = result.rows[0]?.[0];
  if (typeof cell !== 'string') throw new ToolError('query_failed', 'the server gave no plan for this statement');
  return { format: 'json', plan: JSON.parse(cell) as unknown };
}
