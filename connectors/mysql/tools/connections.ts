/** mysql connections: the server's threads (information_schema.PROCESSLIST), counts by command and user, and the connection limit. */
import type { SqlSession } from '../../shared/sql/engine.js';
import { PROCESSES } from './slow-queries.js';

export async function connections(session: SqlSession): Promise<unknown> {
  const sessions = await session.rows(`${PROCESSES} ORDER BY ID LIMIT 500`);
  const [limits] = await session.rows('SELECT @@max_connections AS max_connections');
  const count = (key: string): Record<string, number> =>
    sessions.reduce<Record<string, number>>((counts, row) => ({ ...counts, [String(row[key] ?? 'unknown')]: (counts[String(row[key] ?? 'unknown')] ?? 0) + 1 }), {});
  return { total: sessions.length, max_connections: Number(limits?.['max_connections']), by_command: count('command'), by_user: count('user'), sessions };
}
