/** Database values as plain JSON for the model: exact numbers stay exact (as text), bytes as hex, times as ISO 8601. */

const MAX_TEXT = 10_000;

export function jsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.subarray(0, MAX_TEXT / 2).toString('hex')}${value.length > MAX_TEXT / 2 ? '…' : ''}`;
  if (Array.isArray(value)) return value.map(jsonValue);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, jsonValue(inner)]));
  return value;
}

/** catalog rows with every value JSON-safe */
export const jsonRows = (rows: readonly Record<string, unknown>[]): Record<string, unknown>[] =>
  rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, jsonValue(value)])));

/** how many rows have each value of `key` (a missing or non-text value counts as `unknown`) */
export function countBy(rows: readonly Record<string, unknown>[], key: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const value = row[key];
    const name = typeof value === 'string' || typeof value === 'number' ? String(value) : 'unknown';
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}
