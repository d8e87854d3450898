/**
 * The JavaScript side of NDJSON reading. The hot path only counts rows with a
 * native newline scan (no parsing: DuckDB's reader parses and validates); the
 * per-line JSON.parse below runs only after DuckDB refused a body, to name the
 * exact 1-based line in the 400 `bad_ndjson`.
 */
import { isUtf8 } from 'node:buffer';
import { scanBody } from './body-scan.js';

const NEWLINE = 0x0a;

/** JSON whitespace: a line made only of these is empty and skipped. */
function isBlank(body: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    const byte = body[index];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** Calls `visit(start, end, lineNumber)` for every non-empty line; stops when it returns false. */
function eachRow(body: Buffer, visit: (start: number, end: number, line: number) => boolean): void {
  let start = 0;
  let line = 0;
  while (start <= body.length) {
    let end = body.indexOf(NEWLINE, start);
    if (end === -1) end = body.length;
    line += 1;
    // most lines start with '{': the blank check is then one comparison
    const first = body[start];
    const blank = end === start || ((first === 0x20 || first === 0x09 || first === 0x0d) && isBlank(body, start, end));
    if (!blank && !visit(start, end, line)) return;
    start = end + 1;
  }
}

/** Number of non-empty lines: the request's rows_in. */
export function countRows(body: Buffer): number {
  let rows = 0;
  eachRow(body, () => {
    rows += 1;
    return true;
  });
  return rows;
}

/** 1-based line number of the row at 0-based `rowIndex` (empty lines are not rows). */
export function lineOfRow(body: Buffer, rowIndex: number): number | null {
  let seen = 0;
  let found: number | null = null;
  eachRow(body, (_start, _end, line) => {
    if (seen === rowIndex) {
      found = line;
      return false;
    }
    seen += 1;
    return true;
  });
  return found;
}

export interface BadLine {
  /** 1-based, counting empty lines */
  readonly line: number;
  readonly reason: string;
}

/**
 * The first line nesting arrays/objects deeper than `maxDepth`, or null: one
 * structural pass over the raw bytes before DuckDB (or JSON.parse) sees them.
 */
export function findDeepLine(body: Buffer, maxDepth: number): BadLine | null {
  const { tooDeepAt } = scanBody(body, maxDepth);
  return tooDeepAt === -1 ? null : deepLine(body, tooDeepAt, maxDepth);
}

/** The line holding the bracket at `offset` that went past `maxDepth` (`BodyScan.tooDeepAt`). */
export function deepLine(body: Buffer, offset: number, maxDepth: number): BadLine {
  let line = 1;
  for (let at = body.indexOf(NEWLINE); at !== -1 && at < offset; at = body.indexOf(NEWLINE, at + 1)) line += 1;
  return { line, reason: `nests arrays/objects deeper than ${maxDepth} levels` };
}

/**
 * The first string (key or value) holding a lone UTF-16 surrogate (`"\ud800"`):
 * valid JSON text, but not a Unicode string, so it cannot be stored as UTF-8.
 * Iterative: the line's depth is already bounded, but the walk needs no stack.
 */
// String.prototype.isWellFormed is ES2024 (the target is ES2022): the same test as a pattern
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

function hasLoneSurrogate(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (!isWellFormed(next)) return true;
    } else if (Array.isArray(next)) for (const item of next as unknown[]) pending.push(item);
    else if (typeof next === 'object' && next !== null) {
      for (const [key, inner] of Object.entries(next)) {
        if (!isWellFormed(key)) return true;
        pending.push(inner);
      }
    }
  }
  return false;
}

/** The first line that is not one JSON object (invalid UTF-8, bad JSON, a lone surrogate, or another JSON value), or null. */
export function findBadLine(body: Buffer): BadLine | null {
  let bad: BadLine | null = null;
  eachRow(body, (start, end, line) => {
    const bytes = body.subarray(start, end);
    if (!isUtf8(bytes)) {
      bad = { line, reason: 'is not valid UTF-8' };
      return false;
    }
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      bad = { line, reason: `is not valid JSON (${(error as Error).message})` };
      return false;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      bad = { line, reason: `is ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}, not a JSON object` };
      return false;
    }
    if (hasLoneSurrogate(value)) {
      bad = { line, reason: 'holds a lone UTF-16 surrogate escape (\\uD800-\\uDFFF without its pair), which is not Unicode text' };
      return false;
    }
    return true;
  });
  return bad;
}

/** Every row of a body DuckDB accepted (each line one JSON object), with its 1-based line: what the graph side of an ingest reads. */
export function parseRows(body: Buffer): { readonly line: number; readonly value: Record<string, unknown> }[] {
  const rows: { line: number; value: Record<string, unknown> }[] = [];
  eachRow(body, (start, end, line) => {
    rows.push({ line, value: JSON.parse(body.subarray(start, end).toString('utf8')) as Record<string, unknown> });
    return true;
  });
  return rows;
}
