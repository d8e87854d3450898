/**
 * Schema growth rules: which top-level properties get their own Utf8 column,
 * which stay in `props`, and how names are quoted for DuckDB.
 */

/** The default columns every context table starts with; never promoted from a row. */
const DEFAULT_COLUMNS = ['at', 'label', 'body', 'props'] as const;

/** At most this many new columns per request; later new properties go to `props`. */
const MAX_NEW_COLUMNS_PER_REQUEST = 32;

/** Longer property names stay in `props`. */
const MAX_COLUMN_NAME_LENGTH = 128;

/**
 * Names a row property can never take as a column, compared case-insensitively
 * because DuckDB identifiers are: the defaults, and `rowid` (DuckDB's row
 * pseudo-column, which keyset pagination reads).
 */
const NEVER_PROMOTED = new Set<string>([...DEFAULT_COLUMNS, 'rowid']);

const CONTROL = /[\u0000-\u001f\u007f]/;

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
export const quoteLiteral = (value: string): string => `'${value.replaceAll("'", "''")}'`;

export interface ColumnPlan {
  /** columns to add before inserting, in first-appearance order */
  readonly add: readonly string[];
  /** non-default properties read into their own column (existing or added) */
  readonly stored: readonly string[];
  /** properties kept in `props` (the catch-all) */
  readonly leftovers: readonly string[];
}

/**
 * Decides where every property of a request goes.
 * @param keys the request's distinct top-level property names, in first-appearance order
 * @param existing the table's current column names (exact case)
 * @param evolve false when the request said `X-Schema-Evolve: false`
 */
export function planColumns(keys: readonly string[], existing: ReadonlySet<string>, evolve: boolean): ColumnPlan {
  const taken = new Map<string, string>();
  for (const name of existing) taken.set(name.toLowerCase(), name);
  const add: string[] = [];
  const stored: string[] = [];
  const leftovers: string[] = [];
  for (const key of keys) {
    if (key === 'at' || key === 'label' || key === 'body') continue; // read into the default columns
    const folded = key.toLowerCase();
    if (NEVER_PROMOTED.has(folded)) {
      leftovers.push(key);
    } else if (existing.has(key)) {
      stored.push(key);
    } else if (taken.has(folded) || key.length === 0 || key.length > MAX_COLUMN_NAME_LENGTH || CONTROL.test(key)) {
      // another column already owns this name up to case, or the name is unusable
      leftovers.push(key);
    } else if (evolve && add.length < MAX_NEW_COLUMNS_PER_REQUEST) {
      add.push(key);
      stored.push(key);
      taken.set(folded, key);
    } else {
      leftovers.push(key);
    }
  }
  return { add, stored, leftovers };
}

/** How many of `keys` would be new columns: decides whether first-appearance order matters. */
export function countCandidates(keys: readonly string[], existing: ReadonlySet<string>): number {
  let count = 0;
  for (const key of keys) if (!existing.has(key) && !NEVER_PROMOTED.has(key.toLowerCase())) count += 1;
  return count;
}
