/** postgres locks: who waits on whom (pg_blocking_pids) and the locks held or awaited in this database. */
import type { SqlSession } from '../../shared/sql/engine.js';

export async function locks(session: SqlSession): Promise<unknown> {
  const waits = await session.rows(
    `SELECT w.pid AS waiting_pid, w.usename AS waiting_user, left(w.query, 1000) AS waiting_query,
            round((EXTRACT(EPOCH FROM clock_timestamp() - w.query_start) * 1000)::numeric)::float8 AS waiting_ms,
            b.pid AS blocking_pid, b.usename AS blocking_user, b.state AS blocking_state, left(b.query, 1000) AS blocking_query
       FROM pg_stat_activity w CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS blocker(pid) JOIN pg_stat_activity b ON b.pid = blocker.pid
      ORDER BY waiting_ms DESC LIMIT 100`,
  );
  const held = await session.rows(
    `SELECT l.pid, a.usename AS user, l.locktype, l.mode, l.granted,
            CASE WHEN l.relation IS NOT NULL THEN l.relation::regclass::text END AS relation, l.transactionid::text AS transaction_id, left(a.query, 500) AS query
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.pid <> pg_backend_pid() AND l.locktype IN ('relation', 'transactionid', 'tuple', 'advisory')
        AND (l.database IS NULL OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
      ORDER BY l.granted, l.pid LIMIT 200`,
  );
  return { waits, locks: held };
}
