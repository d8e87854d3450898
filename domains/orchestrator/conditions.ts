/**
 * A step's `when`: a structural test of an earlier step's output. The output
 * is read as parsed JSON when it is JSON text, a dot path picks a value in
 * it, and one of `equals` (deep equality), `contains` (substring of a string,
 * element of an array, substring of anything else's JSON) or `matches` (a
 * regular expression with RE2 semantics, linear time, over the value's text, at most 200 characters, tested on
 * the first 10,000 characters) decides. Nothing is evaluated as code.
 */
import { isDeepStrictEqual } from 'node:util';
import { RE2JS } from 're2js';
import type { StepCondition } from './documents.js';

export const MAX_PATTERN_LENGTH = 200;
const MAX_MATCHED_TEXT = 10_000;

/** A string that is JSON becomes its value; anything else stays as it is. */
export function parsedOutput(output: unknown): unknown {
  if (typeof output !== 'string') return output;
  const text = output.trim();
  if (text === '' || !/^[[{"\d-]|^(true|false|null)$/.test(text)) return output;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return output;
  }
}

function at(value: unknown, path: string | undefined): unknown {
  if (path === undefined || path === '') return value;
  let current = value;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

const textOf = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

export function conditionHolds(condition: StepCondition, output: unknown): boolean {
  const value = at(parsedOutput(output), condition.path);
  if (condition.equals !== undefined) return isDeepStrictEqual(value, condition.equals);
  if (condition.contains !== undefined) {
    if (typeof value === 'string') return value.includes(condition.contains);
    if (Array.isArray(value)) return value.some((item) => item === condition.contains);
    return value !== undefined && textOf(value).includes(condition.contains);
  }
  if (condition.matches !== undefined) {
    // RE2 semantics (linear time): a tenant's pattern cannot backtrack the process into a stall
    return value !== undefined && RE2JS.compile(condition.matches).matcher(textOf(value).slice(0, MAX_MATCHED_TEXT)).find();
  }
  return false;
}
