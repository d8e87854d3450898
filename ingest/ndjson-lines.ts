/**
 * The JavaScript side of NDJSON reading. The hot path only counts rows with a
 * native newline scan (no parsing: DuckDB's reader parses and validates); the
 * per-line JSON.parse below runs only after DuckDB refused a body, to name the
 * exact 1-based line in the 400 `bad_ndjson`.
 */
import { isUtf8 } from 'node:buffer';

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

/** The first line that is not one JSON object (invalid UTF-8, bad JSON, or another JSON value), or null. */
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
    return true;
  });
  return bad;
}
