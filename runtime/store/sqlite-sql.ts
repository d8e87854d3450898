/** The SQL the SQLite store builds from filters, id ranges and text queries: field names checked, values always bound. */
import type { Filter, IdRange, Scalar } from './types.js';

const FIELD_NAME = /^[a-z_][a-z0-9_]*$/;

export function checkField(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`invalid field name "${field}"`);
  return field;
}

export const jsonPath = (field: string): string => `json_extract(data, '$.${checkField(field)}')`;

/** SQLite keeps JSON booleans as 1/0 in json_extract. */
function bindable(value: Scalar): string | number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

export function whereClause(filter: Filter | undefined): { sql: string; params: (string | number | null)[] } {
  const parts: string[] = [];
  const params: (string | number | null)[] = [];
  for (const [field, condition] of Object.entries(filter ?? {})) {
    if (condition !== null && typeof condition === 'object') {
      if (condition.in.length === 0) {
        parts.push('0');
        continue;
      }
      parts.push(`${jsonPath(field)} IN (${condition.in.map(() => '?').join(', ')})`);
      params.push(...condition.in.map(bindable));
    } else if (condition === null) {
      parts.push(`${jsonPath(field)} IS NULL`);
    } else {
      parts.push(`${jsonPath(field)} = ?`);
      params.push(bindable(condition));
    }
  }
  return { sql: parts.length === 0 ? '' : ' AND ' + parts.join(' AND '), params };
}

export function rangeClause(range: IdRange | undefined): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (range?.gte !== undefined) {
    parts.push(' AND id >= ?');
    params.push(range.gte);
  }
  if (range?.lt !== undefined) {
    parts.push(' AND id < ?');
    params.push(range.lt);
  }
  return { sql: parts.join(''), params };
}

/** Turns free text into an FTS5 query of optional quoted terms (no syntax injection). */
export function ftsQuery(text: string): string | null {
  const terms = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (terms.length === 0) return null;
  return [...new Set(terms)].map((term) => `"${term}"`).join(' OR ');
}
