/**
 * Context table rows as an Apache Arrow IPC stream (built with `apache-arrow`):
 * `at` is a UTC millisecond timestamp, `props` the decoded object as JSON
 * text, every other column Utf8.
 */
import { Table, TimeUnit, Timestamp, Utf8, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import { asTextOrNull } from './duck-values.js';

export const ARROW_STREAM_TYPE = 'application/vnd.apache.arrow.stream';

export function rowsToArrowStream(columns: readonly string[], rows: readonly Record<string, unknown>[]): Uint8Array {
  const vectors: Record<string, Vector> = {};
  for (const column of columns) {
    if (column === 'at') {
      vectors[column] = vectorFromArray(
        rows.map((row) => Date.parse(String(row['at']))),
        new Timestamp(TimeUnit.MILLISECOND, 'UTC'),
      );
    } else if (column === 'props') {
      vectors[column] = vectorFromArray(
        rows.map((row) => (row['props'] === null ? null : JSON.stringify(row['props']))),
        new Utf8(),
      );
    } else {
      vectors[column] = vectorFromArray(
        rows.map((row) => asTextOrNull(row[column])),
        new Utf8(),
      );
    }
  }
  return tableToIPC(new Table(vectors), 'stream');
}
