/**
 * The top-level property names of an NDJSON body, from one pass over the raw
 * bytes in JavaScript, in first-appearance order (by line, then position).
 *
 * Only a shortcut: when every name already has its column, the request needs
 * no DuckDB discovery scan (a full JSON parse of the body). The names are
 * exact for valid JSON; an invalid body is refused by DuckDB's reader at the
 * insert, and whenever a column would be added the writer still asks DuckDB
 * (which validates the body before any ALTER).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** Index of the quote that closes the string opened at `open`, or -1 (unterminated). */
function stringEnd(body: Buffer, open: number): number {
  let at = open + 1;
  for (;;) {
    at = body.indexOf(QUOTE, at);
    if (at === -1) return -1;
    let slashes = 0;
    while (body[at - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return at;
    at += 1;
  }
}

function hasEscape(body: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index++) if (body[index] === BACKSLASH) return true;
  return false;
}

/**
 * Distinct top-level keys of the body's objects, or null when a key holds an
 * escape sequence (decoding it is left to DuckDB's parser).
 */
export function topLevelKeys(body: Buffer): string[] | null {
  // keyed by the raw bytes (latin1: one char per byte, so equal strings = equal bytes); decoded at the end
  const seen = new Set<string>();
  let depth = 0;
  let inObject = false;
  let expectKey = false;
  const length = body.length;
  for (let index = 0; index < length; index++) {
    const byte = body[index];
    if (byte === QUOTE) {
      const end = stringEnd(body, index);
      if (end === -1) break; // invalid JSON: DuckDB's reader reports it
      if (depth === 1 && expectKey) {
        if (hasEscape(body, index + 1, end)) return null;
        seen.add(body.toString('latin1', index + 1, end));
        expectKey = false;
      }
      index = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth === 1) {
        inObject = byte === OPEN_OBJECT;
        expectKey = inObject;
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth -= 1;
    else if (byte === COMMA) {
      if (depth === 1) expectKey = inObject;
    } else if (byte === NEWLINE) {
      depth = 0;
      expectKey = false;
    }
  }
  return [...seen].map((raw) => Buffer.from(raw, 'latin1').toString('utf8'));
}
