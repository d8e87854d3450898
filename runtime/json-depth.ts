/**
 * A structural bound on JSON nesting, checked on the raw bytes before
 * `JSON.parse` builds anything: one linear pass counting `[`/`{` outside
 * strings. `JSON.parse` itself copes with deep input, but everything that
 * walks the result afterwards (zod, stringify, templates, DuckDB) recurses,
 * so a 100,000-deep body of a few hundred kilobytes would overflow the stack
 * (500) or hold the event loop. Invalid JSON is left to the parser to report.
 */

/** @default 64: the nesting depth a JSON body or NDJSON line may reach (`MAX_JSON_DEPTH`) */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

export interface TooDeep {
  /** byte offset of the bracket that went past the limit */
  readonly offset: number;
}

/**
 * The first place `bytes` nests arrays/objects deeper than `maxDepth`, or null.
 * `perLine`: the count restarts at every newline (NDJSON: a raw newline cannot
 * be inside a JSON string, so each line is scanned as its own document).
 */
export function findTooDeep(bytes: Uint8Array, maxDepth: number, perLine = false): TooDeep | null {
  let depth = 0;
  let inString = false;
  const length = bytes.length;
  for (let index = 0; index < length; index++) {
    const byte = bytes[index] as number;
    if (inString) {
      // an escape skips the next byte, unless that ends the line (a broken line must not swallow the next)
      if (byte === BACKSLASH && !(perLine && bytes[index + 1] === NEWLINE)) index += 1;
      else if (byte === QUOTE) inString = false;
      else if (byte === NEWLINE && perLine) {
        inString = false;
        depth = 0;
      }
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      depth += 1;
      if (depth > maxDepth) return { offset: index };
    } else if (byte === 0x7d || byte === 0x5d) depth -= 1;
    else if (byte === NEWLINE && perLine) depth = 0;
  }
  return null;
}

/** `findTooDeep` over a string (a form field holding JSON). */
export const stringTooDeep = (text: string, maxDepth: number): boolean => findTooDeep(Buffer.from(text, 'utf8'), maxDepth) !== null;
