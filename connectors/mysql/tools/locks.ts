/** mysql locks: InnoDB transactions and who waits on whom (sys.innodb_lock_waits where the sys schema is there). */
import type { SqlSession } from '../../shared/sql/engine.js';

export async function locks(session: SqlSession): Promise<unknown> {
  let waits: unknown;
  try {
    waits = await session.rows(
      `SELECT wait_age, locked_table, locked_index, locked_type, waiting_pid, LEFT(waiting_query, 1000) AS waiting_query,
              blocking_pid, LEFT(blocking_query, 1000) AS blocking_query FROM sys.innodb_lock_waits LIMIT 100`,
    );
  } catch (error) {
    waits = { available: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const transactions = await session.rows(
    `SELECT trx_id AS id, trx_state AS state, trx_started AS started, trx_mysql_thread_id AS thread_id, LEFT(trx_query, 1000) AS query,
            trx_wait_started AS waiting_since, trx_rows_locked AS rows_locked, trx_tables_locked AS tables_locked
       FROM information_schema.INNODB_TRX ORDER BY trx_started LIMIT 200`,
  );
  return { waits, transactions };
}
