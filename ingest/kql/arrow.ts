/** A KQL result as an Apache Arrow IPC stream: numbers Float64, bools Bool, datetimes UTC ms timestamps, the rest Utf8 (dynamic as JSON text). */
import { Bool, Float64, Table, TimeUnit, Timestamp, Utf8, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import type { KqlResult } from './run.js';

export function kqlToArrowStream(result: Pick<KqlResult, 'columns' | 'rows'>): Uint8Array {
  const vectors: Record<string, Vector> = {};
  result.columns.forEach((column, index) => {
    const values = result.rows.map((row) => row[index]);
    switch (column.type) {
      case 'long':
      case 'int':
      case 'real':
      case 'decimal':
        vectors[column.name] = vectorFromArray(
          values.map((value) => (value === null ? null : Number(value))),
          new Float64(),
        );
        break;
      case 'bool':
        vectors[column.name] = vectorFromArray(values as (boolean | null)[], new Bool());
        break;
      case 'datetime':
        vectors[column.name] = vectorFromArray(
          values.map((value) => (typeof value === 'string' ? Date.parse(value) : null)),
          new Timestamp(TimeUnit.MILLISECOND, 'UTC'),
        );
        break;
      default:
        vectors[column.name] = vectorFromArray(
          values.map((value) => (value === null ? null : typeof value === 'string' ? value : JSON.stringify(value))),
          new Utf8(),
        );
    }
  });
  return tableToIPC(new Table(vectors), 'stream');
}
