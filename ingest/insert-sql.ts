/**
 * The SQL that moves one spilled NDJSON body into a context table. DuckDB's
 * native JSON reader does all per-value work (parse, validate, convert every
 * value to text); JavaScript only builds the statement.
 *
 * - fast path (every property has a column): `read_json` with explicit
 *   VARCHAR columns, one parse per line;
 * - catch-all path (some properties go to `props`): `read_ndjson_objects`,
 *   `json_transform` for the columns and `json_merge_patch` to strip them from
 *   the object kept in `props`.
 */
import { quoteIdent, quoteLiteral } from './columns.js';

/** Raised inside DuckDB for a row whose `at` is not a timestamp; the message is ours, never parsed. */
const BAD_AT = quoteLiteral('ingest: a row has an "at" that is not a timestamp');
const NOT_OBJECT = quoteLiteral('ingest: a line is not a JSON object');

/** Epoch numbers at or above this are milliseconds, below it seconds (1e11 s is the year 5138). */
const EPOCH_MS_THRESHOLD = 1e11;

/**
 * `at` from the row: an ISO 8601 / SQL timestamp string (offsets honoured), or
 * epoch seconds or milliseconds; absent or null = arrival time.
 */
function timestampExpression(raw: string, arrival: Date, strict: boolean): string {
  const number = `try_cast(${raw} AS DOUBLE)`;
  const epoch = `to_timestamp(CASE WHEN abs(${number}) >= ${EPOCH_MS_THRESHOLD} THEN ${number} / 1000 ELSE ${number} END)`;
  // the text is cast once: coalesce evaluates its second argument only for the rows the first left NULL (the
  // former CASE cast every row twice, ~15% of the insert's CPU time: issue 20)
  return `CASE WHEN ${raw} IS NULL THEN ${quoteLiteral(arrival.toISOString())}::TIMESTAMPTZ
    ELSE coalesce(try_cast(${raw} AS TIMESTAMPTZ), CASE WHEN ${number} IS NOT NULL THEN ${strict ? epoch : `try(${epoch})`}
      ELSE ${strict ? `error(${BAD_AT})` : 'NULL'} END) END`;
}

export interface InsertPlan {
  readonly table: string;
  readonly file: string;
  /** non-default properties stored in their own columns */
  readonly stored: readonly string[];
  /** true when some property of the body goes to `props` */
  readonly catchAll: boolean;
  readonly arrival: Date;
  /** DuckDB's per-line limit must cover the longest line; the body size does */
  readonly maxLineBytes: number;
}

/**
 * DuckDB's `maximum_object_size`: no line is longer than the body. Not the 16 MB
 * default: the reader allocates buffers of twice this size per scan, which
 * under concurrent requests exhausted the engine's memory limit.
 */
const objectSize = (maxLineBytes: number): number => maxLineBytes + 1;

export function insertStatement(plan: InsertPlan): string {
  const targets = ['at', 'label', 'body', ...(plan.catchAll ? ['props'] : []), ...plan.stored].map(quoteIdent).join(', ');
  const read = ['at', 'label', 'body', ...plan.stored];
  if (!plan.catchAll) {
    const columns = read.map((name) => `${quoteLiteral(name)}: 'VARCHAR'`).join(', ');
    const values = [timestampExpression('"at"', plan.arrival, true), ...read.slice(1).map(quoteIdent)].join(', ');
    return `INSERT INTO ${plan.table} (${targets})
      SELECT ${values}
      FROM read_json(${quoteLiteral(plan.file)}, format = 'newline_delimited', records = true, auto_detect = false,
                     maximum_object_size = ${objectSize(plan.maxLineBytes)}, columns = {${columns}})`;
  }
  const struct = JSON.stringify(Object.fromEntries(read.map((name) => [name, 'VARCHAR'])));
  const strip = JSON.stringify(Object.fromEntries(read.map((name) => [name, null])));
  const field = (name: string): string => `s.${quoteIdent(name)}`;
  const values = [
    timestampExpression(field('at'), plan.arrival, true),
    field('label'),
    field('body'),
    `CASE WHEN rest::VARCHAR = '{}' THEN NULL ELSE encode(rest::VARCHAR) END`,
    ...plan.stored.map(field),
  ].join(', ');
  return `INSERT INTO ${plan.table} (${targets})
    SELECT ${values}
    FROM (SELECT CASE WHEN json_type(json) = 'OBJECT' THEN json_transform(json, ${quoteLiteral(struct)}) ELSE error(${NOT_OBJECT}) END AS s,
                 json_merge_patch(json, ${quoteLiteral(strip)}) AS rest
          FROM read_ndjson_objects(${quoteLiteral(plan.file)}, maximum_object_size = ${objectSize(plan.maxLineBytes)}))`;
}

/** Distinct top-level property names of the body (order not significant). */
export function keysStatement(file: string, maxLineBytes: number): string {
  return `SELECT DISTINCT unnest(json_keys(json)) FROM read_ndjson_objects(${quoteLiteral(file)},
    maximum_object_size = ${objectSize(maxLineBytes)})`;
}

/** The same names in first-appearance order (by line, then position in the line): decides which 32 become columns. */
export function orderedKeysStatement(file: string, maxLineBytes: number): string {
  return `SELECT key FROM (
      SELECT unnest(keys) AS key, generate_subscripts(keys, 1) AS position, row AS row
      FROM (SELECT json_keys(json) AS keys, row_number() OVER () AS row
            FROM read_ndjson_objects(${quoteLiteral(file)}, maximum_object_size = ${objectSize(maxLineBytes)})))
    GROUP BY key ORDER BY min(row), min_by(position, row)`;
}

/** 0-based index of the first row whose `at` is present but not a timestamp, if any. */
export function badTimestampStatement(file: string, maxLineBytes: number): string {
  return `SELECT row - 1 FROM (
      SELECT row_number() OVER () AS row, "at"
      FROM read_json(${quoteLiteral(file)}, format = 'newline_delimited', records = true, auto_detect = false,
                     maximum_object_size = ${objectSize(maxLineBytes)}, columns = {'at': 'VARCHAR'}))
    WHERE "at" IS NOT NULL AND (${timestampExpression('"at"', new Date(0), false)}) IS NULL
    ORDER BY row LIMIT 1`;
}
