/**
 * postgres slow_queries: the statements with the most total time from
 * pg_stat_statements when the extension is installed and loaded (tried
 * under a savepoint, since a failure would abort the transaction), and the
 * statements running now for longer than the threshold (pg_stat_activity).
 */
import type { SqlSession } from '../../shared/sql/engine.js';

async function statistics(session: SqlSession, limit: number): Promise<Record<string, unknown>> {
  const [extension] = await session.rows("SELECT extversion AS version FROM pg_extension WHERE extname = 'pg_stat_statements'");
  if (extension === undefined) {
    return {
      available: false,
      source: 'pg_stat_statements',
      reason: 'the pg_stat_statements extension is not installed in this database (CREATE EXTENSION pg_stat_statements, with it in shared_preload_libraries)',
    };
  }
  await session.rows('SAVEPOINT slow_queries');
  try {
    const top = await session.rows(
      `SELECT left(s.query, 2000) AS query, s.calls, round(s.total_exec_time::numeric, 1)::float8 AS total_ms, round(s.mean_exec_time::numeric, 2)::float8 AS mean_ms,
              round(s.max_exec_time::numeric, 1)::float8 AS max_ms, s.rows, r.rolname AS user
         FROM pg_stat_statements s LEFT JOIN pg_roles r ON r.oid = s.userid
        WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY s.total_exec_time DESC LIMIT $1`,
      [limit],
    );
    return { available: true, source: 'pg_stat_statements', top_by_total_time: top };
  } catch (error) {
    await session.rows('ROLLBACK TO SAVEPOINT slow_queries');
    return { available: false, source: 'pg_stat_statements', reason: error instanceof Error ? error.message : String(error) };
  }
}

async function runningStatements(session: SqlSession, minDurationMs: number, limit: number): Promise<Record<string, unknown>[]> {
  return session.rows(
    `SELECT pid, usename AS user, datname AS database, host(client_addr) AS client_addr, state, wait_event_type, wait_event,
            round((EXTRACT(EPOCH FROM clock_timestamp() - query_start) * 1000)::numeric)::float8 AS running_ms, left(query, 2000) AS query
       FROM pg_stat_activity
      WHERE state IS DISTINCT FROM 'idle' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
        AND clock_timestamp() - query_start >= make_interval(secs => $1::float8 / 1000)
      ORDER BY query_start LIMIT $2`,
    [minDurationMs, limit],
  );
}

export async function slowQueries(session: SqlSession, limit: number, minDurationMs: number): Promise<unknown> {
  return { statistics: await statistics(session, limit), running: await runningStatements(session, minDurationMs, limit), min_duration_ms: minDurationMs };
}
