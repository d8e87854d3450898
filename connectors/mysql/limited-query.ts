/**
 * One caller-given statement as a server-side prepared statement (the
 * parameters travel bound; a text holding two statements does not prepare),
 * keeping at most `limit` rows. MySQL's protocol has no "stop after N rows",
 * so the rest is read and dropped: memory stays bounded and the statement
 * timeout bounds the time.
 */
import mysql from 'mysql2/promise';
import type { QueryResult } from '../shared/sql/engine.js';
import { jsonValue } from '../shared/sql/values.js';

/** mysql2's numeric column types by name, for the answer's `type` */
const TYPE_NAMES = new Map<number, string>(Object.entries(mysql.Types as unknown as Record<string, number>).map(([name, code]) => [code, name.toLowerCase()]));

interface Field {
  readonly name: string;
  readonly type?: number;
  readonly columnType?: number;
}

export function runLimited(conn: mysql.PoolConnection | mysql.Connection, sql: string, params: readonly unknown[], limit: number): Promise<QueryResult> {
  return new Promise((resolve, reject) => {
    let fields: readonly Field[] = [];
    const rows: unknown[][] = [];
    let more = false;
    const core = (conn as unknown as { connection: unknown }).connection as { execute(options: Record<string, unknown>): NodeJS.EventEmitter };
    const command = core.execute({ sql, values: [...params], rowsAsArray: true });
    command.on('fields', (received: Field[] | undefined) => (fields = received ?? []));
    command.on('result', (row: unknown) => {
      if (!Array.isArray(row)) return; // the header of a statement without rows
      if (rows.length < limit) rows.push(row.map(jsonValue));
      else more = true;
    });
    command.on('error', reject);
    command.on('end', () =>
      resolve({
        columns: fields.map((field) => ({ name: field.name, type: TYPE_NAMES.get(field.columnType ?? field.type ?? -1) ?? 'unknown' })),
        rows,
        row_count: rows.length,
        truncated: more,
      }),
    );
  });
}
