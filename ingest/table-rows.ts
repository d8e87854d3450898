/**
 * Reading a context table back: newest first (`at` descending, then insertion
 * order descending), keyset-paginated on (`at`, rowid), `props` decoded.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './columns.js';
import { asText, asTextOrNull } from './duck-values.js';
import { qualified } from './table-catalog.js';

export interface RowsCursor {
  /** `at` of the last row seen, microseconds since the epoch */
  readonly atMicros: bigint;
  readonly rowid: bigint;
}

export interface RowsPage {
  /** column names in table order */
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
  readonly total: number;
  readonly next: RowsCursor | null;
}

export const encodeRowsCursor = (cursor: RowsCursor): string => `${cursor.atMicros}:${cursor.rowid}`;

export function decodeRowsCursor(text: string): RowsCursor | null {
  const match = /^(-?\d{1,20}):(\d{1,20})$/.exec(text);
  if (!match) return null;
  return { atMicros: BigInt(match[1] as string), rowid: BigInt(match[2] as string) };
}

function decodeProps(raw: unknown): unknown {
  const text = asTextOrNull(raw);
  return text === null ? null : (JSON.parse(text) as unknown);
}

/** One page of rows; null when the table does not exist. */
export async function readRows(connection: DuckDBConnection, schema: string, table: string, limit: number, after: RowsCursor | null): Promise<RowsPage | null> {
  const described = await connection.runAndReadAll(
    `SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 ORDER BY column_index`,
    [schema, table],
  );
  const columns = described.getRowsJS().map((row) => asText(row[0]));
  if (columns.length === 0) return null;
  const extra = columns.filter((name) => !['at', 'label', 'body', 'props'].includes(name));
  const name = qualified(schema, table);
  // positional reads: a user column may be called anything, so no aliases are relied on
  const reader = await connection.runAndReadAll(
    `SELECT epoch_us("at")::BIGINT, rowid, "label", "body", decode("props"), ${extra.map(quoteIdent).join(', ') || 'NULL'}
     FROM ${name}
     WHERE $1::BIGINT IS NULL OR epoch_us("at") < $1::BIGINT OR (epoch_us("at") = $1::BIGINT AND rowid < $2::BIGINT)
     ORDER BY "at" DESC, rowid DESC
     LIMIT ${limit + 1}`,
    [after === null ? null : after.atMicros, after === null ? null : after.rowid],
  );
  const raw = reader.getRowsJS();
  const counted = await connection.runAndReadAll(`SELECT count(*) FROM ${name}`);
  const rows = raw.slice(0, limit).map((values) => {
    const row: Record<string, unknown> = {
      at: new Date(Number(BigInt(values[0] as bigint) / 1000n)).toISOString(),
      label: asTextOrNull(values[2]),
      body: asTextOrNull(values[3]),
      props: decodeProps(values[4]),
    };
    extra.forEach((column, index) => {
      row[column] = asTextOrNull(values[5 + index]);
    });
    return row;
  });
  const last = raw[Math.min(limit, raw.length) - 1];
  return {
    columns,
    rows,
    total: Number(counted.getRowsJS()[0]?.[0] ?? 0),
    next: raw.length > limit && last ? { atMicros: BigInt(last[0] as bigint), rowid: BigInt(last[1] as bigint) } : null,
  };
}
