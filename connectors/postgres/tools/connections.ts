/** postgres connections: client sessions (pg_stat_activity), counts by state and user, and the connection limit. */
import type { SqlSession } from '../../shared/sql/engine.js';
import { countBy } from '../../shared/sql/values.js';

export async function connections(session: SqlSession): Promise<unknown> {
  const sessions = await session.rows(
    `SELECT pid, usename AS user, datname AS database, application_name, host(client_addr) AS client_addr, state, backend_start,
            round((EXTRACT(EPOCH FROM clock_timestamp() - query_start) * 1000)::numeric)::float8 AS query_ms, wait_event_type, wait_event, left(query, 500) AS query
       FROM pg_stat_activity WHERE backend_type = 'client backend' ORDER BY backend_start LIMIT 500`,
  );
  const [limits] = await session.rows(
    "SELECT current_setting('max_connections')::int AS max_connections, current_setting('superuser_reserved_connections')::int AS reserved_for_superusers",
  );
  return { total: sessions.length, ...limits, by_state: countBy(sessions, 'state'), by_user: countBy(sessions, 'user'), sessions };
}
