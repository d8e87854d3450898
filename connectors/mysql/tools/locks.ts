/**
 * mysql locks: who waits on whom (sys.innodb_lock_waits, where the sys
 * schema is there) and the open InnoDB transactions (information_schema
 * INNODB_TRX, which needs the PROCESS privilege). Each part that the server
 * or the login's privileges do not offer says why instead.
 */
import type { SqlSession } from '../../shared/sql/engine.js';

/** the rows, or `{ available: false, reason }`: a failed statement does not end a MySQL transaction */
async function optional(session: SqlSession, sql: string): Promise<unknown> {
  try {
    return await session.rows(sql);
  } catch (error) {
    return { available: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

export async function locks(session: SqlSession): Promise<unknown> {
  const waits = await optional(
    session,
    `SELECT wait_age, locked_table, locked_index, locked_type, waiting_pid, LEFT(waiting_query, 1000) AS waiting_query,
            blocking_pid, LEFT(blocking_query, 1000) AS blocking_query FROM sys.innodb_lock_waits LIMIT 100`,
  );
  const transactions = await optional(
    session,
    `SELECT trx_id AS id, trx_state AS state, trx_started AS started, trx_mysql_thread_id AS thread_id, LEFT(trx_query, 1000) AS query,
            trx_wait_started AS waiting_since, trx_rows_locked AS rows_locked, trx_tables_locked AS tables_locked
       FROM information_schema.INNODB_TRX ORDER BY trx_started LIMIT 200`,
  );
  return { waits, transactions };
}
