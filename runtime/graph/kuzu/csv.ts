/**
 * New rows as CSV text for COPY, the engine's bulk path (~10x MERGE), and
 * the private folder the files COPY reads are written to.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from '../../file-modes.js';
import type { Properties } from '../batches.js';
import { toColumnText, type ColumnType } from '../values.js';

/**
 * How a CSV row marks NULL (COPY's NULL_STRINGS; an empty field must stay an
 * empty string). `NULL` because the engine's BOOLEAN reader takes no other
 * null text. The match is exact (`null`, ` NULL ` stay strings); rows holding
 * exactly `NULL` as a value are sent as a list parameter instead, so no value
 * is ever mistaken for NULL.
 */
export const CSV_NULL = 'NULL';
/** the dialect spelled out: left to detect it, the reader takes `'` for a quote in a file that holds no `"` */
export const CSV_OPTIONS = `header=false, parallel=false, auto_detect=false, delim=',', quote='"', escape='"', null_strings=['${CSV_NULL}']`;

/**
 * CSV text for COPY: each row's lead cells (its key, or its from and to
 * keys), then one cell per column in `names` (NULL where the row gives
 * none); null when a value is one CSV cannot carry. Values are checked against
 * their column as they are written (400 when one does not fit).
 */
export function csvOf<R>(
  rows: readonly R[],
  lead: (row: R) => readonly string[],
  propsOf: (row: R) => Properties,
  table: string,
  names: readonly string[],
  columns: ReadonlyMap<string, ColumnType>,
): string | null {
  const types = names.map((name) => columns.get(name)!);
  const lines = new Array<string>(rows.length);
  for (let at = 0; at < rows.length; at += 1) {
    const row = rows[at]!;
    let line = '';
    let first = true;
    for (const cell of lead(row)) {
      const encoded = cellOf(cell);
      if (encoded === null) return null;
      line += first ? encoded : ',' + encoded;
      first = false;
    }
    const props = propsOf(row);
    for (let column = 0; column < names.length; column += 1) {
      const value = props[names[column]!];
      const type = types[column]!;
      // the common cases inline (a request's first batches run before the engine has optimized this loop)
      if (typeof value === 'number' && type === 'INT64' && Number.isSafeInteger(value)) {
        line += ',' + String(value);
        continue;
      }
      const text = typeof value === 'string' && type === 'STRING' ? value : toColumnText(value, type, table, names[column]!);
      if (text === null) {
        line += `,${CSV_NULL}`;
        continue;
      }
      const encoded = cellOf(text);
      if (encoded === null) return null;
      line += ',' + encoded;
    }
    lines[at] = line;
  }
  return lines.join('\n') + '\n';
}

/**
 * Cells as COPY reads them back exactly: quoted only when they must be (the
 * engine reads quoted cells at half the speed): quotes, separators, line
 * breaks, backslashes and edge blanks are kept safe inside quotes. An
 * unquoted empty cell reads as the empty string in a STRING column (other
 * columns never get one). CSV cannot carry a NUL character (the engine's
 * reader fails on it) nor the text CSV_NULL (it would read as NULL).
 */
export function csvNeeds(text: string): 'plain' | 'quoted' | 'none' {
  if (text === CSV_NULL) return 'none';
  if (csvPlain(text)) return 'plain';
  return text.includes('\u0000') ? 'none' : 'quoted';
}

export const csvQuoted = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/** the cell for a text, or null when CSV cannot carry it (the common plain case decided inline) */
function cellOf(text: string): string | null {
  const length = text.length;
  if (length > 0 && !CSV_SPECIAL.test(text)) {
    const first = text.charCodeAt(0);
    const last = text.charCodeAt(length - 1);
    if (first > 0x20 && first < 0x80 && last > 0x20 && last < 0x80) return text === CSV_NULL ? null : text;
  }
  const needs = csvNeeds(text);
  return needs === 'plain' ? text : needs === 'quoted' ? csvQuoted(text) : null;
}

/** a character that needs quotes (or, NUL, that CSV cannot carry): one scan finds none in most cells */
const CSV_SPECIAL = /[",\n\r\\\u0000]/;
const EDGE_BLANK = /^\s|\s$/;

/** whether a cell reads back exactly unquoted: no special character, no blank at either edge */
function csvPlain(text: string): boolean {
  if (CSV_SPECIAL.test(text)) return false;
  const length = text.length;
  if (length === 0) return true;
  // \s matches ASCII blanks and controls, or non-ASCII spaces: only edges in those ranges need the pattern
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(length - 1);
  return !((first <= 0x20 || first >= 0x80 || last <= 0x20 || last >= 0x80) && EDGE_BLANK.test(text));
}

/** A private folder for the CSV files COPY reads: made on first use, removed on close. */
export class CsvStaging {
  private folder: string | null = null;
  private staged = 0;
  /** COPY reads CSV files only when their path can be quoted into its text; otherwise rows go as list parameters */
  readonly enabled = !/['\\]/.test(tmpdir());

  /** runs `copy` (a COPY inside the open transaction) on a file holding `csv` */
  async copy(csv: string, copy: (file: string) => Promise<void>): Promise<void> {
    this.folder ??= await mkdtemp(join(tmpdir(), 'graph-copy-'));
    const file = join(this.folder, `${(this.staged += 1)}.csv`);
    await writeFile(file, csv, { mode: PRIVATE_FILE_MODE });
    try {
      await copy(file);
    } finally {
      // not awaited: the transaction goes on meanwhile (names are never reused; close removes the folder)
      void rm(file, { force: true }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.folder !== null) await rm(this.folder, { recursive: true, force: true });
  }
}
