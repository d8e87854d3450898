/**
 * Kusto's string operators (==~, contains, startswith, has, hasprefix, ... and their _cs and !
 * forms) over two text values. Term matching (has*) is a regex on term boundaries; with a literal
 * term the pattern is a constant behind a substring test every match passes.
 */
import { str } from './sql-text.js';

const CASE_INSENSITIVE: Record<string, { op: string; ci: boolean; not: boolean }> = {
  ContainsExpression: { op: 'contains', ci: true, not: false },
  NotContainsExpression: { op: 'contains', ci: true, not: true },
  ContainsCsExpression: { op: 'contains', ci: false, not: false },
  NotContainsCsExpression: { op: 'contains', ci: false, not: true },
  StartsWithExpression: { op: 'starts_with', ci: true, not: false },
  NotStartsWithExpression: { op: 'starts_with', ci: true, not: true },
  StartsWithCsExpression: { op: 'starts_with', ci: false, not: false },
  NotStartsWithCsExpression: { op: 'starts_with', ci: false, not: true },
  EndsWithExpression: { op: 'ends_with', ci: true, not: false },
  NotEndsWithExpression: { op: 'ends_with', ci: true, not: true },
  EndsWithCsExpression: { op: 'ends_with', ci: false, not: false },
  NotEndsWithCsExpression: { op: 'ends_with', ci: false, not: true },
  HasExpression: { op: 'has', ci: true, not: false },
  NotHasExpression: { op: 'has', ci: true, not: true },
  HasCsExpression: { op: 'has', ci: false, not: false },
  NotHasCsExpression: { op: 'has', ci: false, not: true },
  HasPrefixExpression: { op: 'hasprefix', ci: true, not: false },
  NotHasPrefixExpression: { op: 'hasprefix', ci: true, not: true },
  HasPrefixCsExpression: { op: 'hasprefix', ci: false, not: false },
  NotHasPrefixCsExpression: { op: 'hasprefix', ci: false, not: true },
  HasSuffixExpression: { op: 'hassuffix', ci: true, not: false },
  NotHasSuffixExpression: { op: 'hassuffix', ci: true, not: true },
  HasSuffixCsExpression: { op: 'hassuffix', ci: false, not: false },
  NotHasSuffixCsExpression: { op: 'hassuffix', ci: false, not: true },
};

/** Regex-escapes a SQL string value inside DuckDB (the needle may be any expression). */
const reEscape = (sql: string): string => `regexp_replace(${sql}, '([\\\\^$.|?*+()\\[\\]{}-])', '\\\\\\1', 'g')`;

/** Regex-escapes a needle known when translating (the characters `reEscape` escapes inside DuckDB). */
const reEscapeText = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}-]/g, '\\$&');

const isAscii = (text: string): boolean => [...text].every((char) => char.charCodeAt(0) < 128);

/**
 * A cheap test every match of a literal needle passes, run before the regular expression (a
 * substring search costs a fraction of a regex): the needle as bytes, or case-insensitively
 * lower(hay) containing the ASCII needle lowered. RE2's case folding maps two non-ASCII
 * characters to ASCII letters: KELVIN SIGN, which lower() maps to "k", and LATIN SMALL LETTER
 * LONG S, which it leaves (a hay containing it skips the shortcut). Null when there is no such test.
 */
function needlePrefilter(hay: string, text: string, ci: boolean): string | null {
  if (!ci) return `contains(${hay}, ${str(text)})`;
  if (!isAscii(text)) return null;
  return `(contains(lower(${hay}), ${str(text.toLowerCase())}) OR contains(${hay}, '\u017f'))`;
}

/**
 * Kusto term matching: the needle must start (has, hasprefix) and/or end (has, hassuffix) at a term
 * boundary. `text`: the needle's value when it is a literal (a constant pattern, behind a prefilter).
 */
export function termMatch(op: string, hay: string, needle: string, ci: boolean, text?: string): string {
  const flags = ci ? ", 'i'" : '';
  if (text !== undefined) {
    if (text === '') return 'TRUE';
    const core = reEscapeText(text);
    const pattern = op === 'has' ? `(^|[^[:alnum:]])${core}([^[:alnum:]]|$)` : op === 'hasprefix' ? `(^|[^[:alnum:]])${core}` : `${core}([^[:alnum:]]|$)`;
    const match = `regexp_matches(${hay}, ${str(pattern)}${flags})`;
    const prefilter = needlePrefilter(hay, text, ci);
    return prefilter ? `(${prefilter} AND ${match})` : `(${match})`;
  }
  const before = "'(^|[^[:alnum:]])'";
  const after = "'([^[:alnum:]]|$)'";
  const pattern =
    op === 'has' ? `${before} || ${reEscape(needle)} || ${after}` : op === 'hasprefix' ? `${before} || ${reEscape(needle)}` : `${reEscape(needle)} || ${after}`;
  return `(${needle} = '' OR regexp_matches(${hay}, ${pattern}${flags}))`;
}

/** A Kusto string operator of syntax `kind` over two text values; `text`: the right side's value when it is a literal. Null for other kinds. */
export function stringOperator(kind: string, left: string, right: string, text?: string): string | null {
  const spec = CASE_INSENSITIVE[kind];
  if (!spec) return null;
  const hay = `coalesce(${left}, '')`;
  const needle = `coalesce(${right}, '')`;
  let test: string;
  if (spec.op === 'has' || spec.op === 'hasprefix' || spec.op === 'hassuffix') test = termMatch(spec.op, hay, needle, spec.ci, text);
  else test = spec.ci ? `${spec.op}(lower(${hay}), lower(${needle}))` : `${spec.op}(${hay}, ${needle})`;
  return spec.not ? `(NOT ${test})` : test;
}
