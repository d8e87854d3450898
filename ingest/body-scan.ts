/**
 * One pass over an NDJSON body's raw bytes in JavaScript, before DuckDB reads
 * it: the nesting bound (`MAX_JSON_DEPTH`, per line) and the top-level
 * property names in first-appearance order (by line, then position).
 *
 * It runs on the event loop for every request, so it is built for speed
 * (issue 20: the former separate depth scan and key scan took ~10 of the
 * server's ~21 CPU-seconds at 1M rows): string contents are skipped with a
 * native `indexOf` of the closing quote, a name already seen is recognised by
 * a hash of its bytes without building a string, and only structural bytes
 * outside strings are visited one by one.
 *
 * The names are only a shortcut: when every name already has its column, the
 * request needs no DuckDB discovery scan. They are exact for valid JSON; an
 * invalid body is refused by DuckDB's reader at the insert, and whenever a
 * column would be added the writer still asks DuckDB (which validates the body
 * before any ALTER).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

export interface BodyScan {
  /** byte offset of the first bracket nesting deeper than the bound, or -1 */
  readonly tooDeepAt: number;
  /**
   * distinct top-level names of the body's objects in first-appearance order,
   * or null when a name holds an escape sequence (decoding it is left to DuckDB's parser) or the body is too deep
   */
  readonly keys: string[] | null;
}

/** A name seen before: its bytes, to tell it from another name of the same hash. */
interface SeenName {
  readonly bytes: Buffer;
  readonly next: SeenName | null;
}

function sameBytes(body: Buffer, start: number, end: number, bytes: Buffer): boolean {
  if (bytes.length !== end - start) return false;
  for (let index = 0; index < bytes.length; index++) if (body[start + index] !== bytes[index]) return false;
  return true;
}

/**
 * Scans `body` once. Depth semantics are `findTooDeep(body, maxDepth, true)`'s
 * (runtime/json-depth.ts): brackets inside strings do not count, a backslash
 * escapes the next byte, and every newline starts over (a raw newline cannot be
 * inside a JSON string, so a broken line never swallows the next).
 */
export function scanBody(body: Buffer, maxDepth: number): BodyScan {
  const length = body.length;
  const seen = new Map<number, SeenName>();
  const names: Buffer[] = [];
  let escapedName = false;
  let depth = 0;
  let inObject = false;
  let expectKey = false;
  let lineEnd = body.indexOf(NEWLINE);
  if (lineEnd === -1) lineEnd = length;
  for (let index = 0; index < length; index++) {
    if (index === lineEnd) {
      depth = 0;
      expectKey = false;
      lineEnd = body.indexOf(NEWLINE, index + 1);
      if (lineEnd === -1) lineEnd = length;
      continue;
    }
    const byte = body[index];
    if (byte === QUOTE) {
      // the closing quote: the next one not escaped; a byte loop (a native indexOf per string costs more for the
      // short strings of typical events)
      let end = index + 1;
      for (;;) {
        const value = body[end];
        if (value === QUOTE || end >= lineEnd) break;
        // an escape skips the next byte, unless that ends the line
        end += value === BACKSLASH && end + 1 < lineEnd ? 2 : 1;
      }
      if (end >= lineEnd) {
        // an unterminated string: the line is broken, the next line starts over (DuckDB's reader reports it)
        index = lineEnd - 1;
        continue;
      }
      if (depth === 1 && expectKey && !escapedName) {
        let hash = 0x811c9dc5;
        let escape = false;
        for (let at = index + 1; at < end; at++) {
          const value = body[at] as number;
          if (value === BACKSLASH) escape = true;
          hash = Math.imul(hash ^ value, 0x01000193);
        }
        if (escape) escapedName = true;
        else {
          let entry = seen.get(hash);
          const head = entry ?? null;
          while (entry && !sameBytes(body, index + 1, end, entry.bytes)) entry = entry.next ?? undefined;
          if (!entry) {
            // a copy: the name must not keep the request's body alive
            const bytes = Buffer.from(body.subarray(index + 1, end));
            seen.set(hash, { bytes, next: head });
            names.push(bytes);
          }
        }
        expectKey = false;
      }
      index = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > maxDepth) return { tooDeepAt: index, keys: null };
      if (depth === 1) {
        inObject = byte === OPEN_OBJECT;
        expectKey = inObject;
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth -= 1;
    else if (byte === COMMA && depth === 1) expectKey = inObject;
  }
  return { tooDeepAt: -1, keys: escapedName ? null : names.map((bytes) => bytes.toString('utf8')) };
}
