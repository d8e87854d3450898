/**
 * mysql slow_queries: statement digests with the most total time from
 * performance_schema (events_statements_summary_by_digest) when it is on,
 * and the statements running now for longer than the threshold
 * (information_schema.PROCESSLIST; without the PROCESS privilege, the
 * user's own).
 */
import type { SqlSession } from '../../shared/sql/engine.js';

async function statistics(session: SqlSession, limit: number): Promise<Record<string, unknown>> {
  const [setting] = await session.rows('SELECT @@performance_schema AS enabled');
  if (Number(setting?.['enabled']) !== 1) {
    return {
      available: false,
      source: 'performance_schema',
      reason: 'performance_schema is off on this server (performance_schema=ON in the server config, then a restart)',
    };
  }
  try {
    const top = await session.rows(
      `SELECT LEFT(DIGEST_TEXT, 2000) AS query, SCHEMA_NAME AS \`schema\`, COUNT_STAR AS calls, ROUND(SUM_TIMER_WAIT / 1e9, 1) AS total_ms,
              ROUND(AVG_TIMER_WAIT / 1e9, 2) AS mean_ms, ROUND(MAX_TIMER_WAIT / 1e9, 1) AS max_ms, SUM_ROWS_SENT AS rows_sent, SUM_ROWS_EXAMINED AS rows_examined
         FROM performance_schema.events_statements_summary_by_digest ORDER BY SUM_TIMER_WAIT DESC LIMIT ${Math.trunc(limit)}`,
    );
    return { available: true, source: 'performance_schema', top_by_total_time: top };
  } catch (error) {
    // a statement error does not end a MySQL transaction: the running statements are still read
    return { available: false, source: 'performance_schema', reason: error instanceof Error ? error.message : String(error) };
  }
}

export const PROCESSES = `SELECT ID AS id, USER AS user, HOST AS client, DB AS db, COMMAND AS command, TIME AS seconds, STATE AS state, LEFT(INFO, 2000) AS query
  FROM information_schema.PROCESSLIST`;

export async function slowQueries(session: SqlSession, limit: number, minDurationMs: number): Promise<unknown> {
  const running = await session.rows(
    `${PROCESSES} WHERE COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') AND ID <> CONNECTION_ID() AND TIME * 1000 >= ? ORDER BY TIME DESC LIMIT ${Math.trunc(limit)}`,
    [minDurationMs],
  );
  return { statistics: await statistics(session, limit), running, min_duration_ms: minDurationMs };
}
