/** Values read back from DuckDB (`getRowsJS`) narrowed to what the context tables hold. */

/** VARCHAR / integer values as text; anything else is a bug in the query that produced it. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  throw new Error(`unexpected ${typeof value} value from DuckDB`);
}

export const asTextOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : asText(value));
