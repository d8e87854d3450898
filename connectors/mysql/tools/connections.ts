/** mysql connections: the server's threads (information_schema.PROCESSLIST), counts by command and user, and the connection limit. */
import type { SqlSession } from '../../shared/sql/engine.js';
import { countBy } from '../../shared/sql/values.js';
import { PROCESSES } from './slow-queries.js';

export async function connections(session: SqlSession): Promise<unknown> {
  const sessions = await session.rows(`${PROCESSES} ORDER BY ID LIMIT 500`);
  const [limits] = await session.rows('SELECT @@max_connections AS max_connections');
  return {
    total: sessions.length,
    max_connections: Number(limits?.['max_connections']),
    by_command: countBy(sessions, 'command'),
    by_user: countBy(sessions, 'user'),
    sessions,
  };
}
