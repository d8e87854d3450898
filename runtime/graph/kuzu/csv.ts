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
      if (!csvCarries(cell)) return null;
      line += first ? csvCell(cell) : ',' + csvCell(cell);
      first = false;
    }
    const props = propsOf(row);
    for (let column = 0; column < names.length; column += 1) {
      const text = toColumnText(props[names[column]!], types[column]!, table, names[column]!);
      if (text !== null && !csvCarries(text)) return null;
      line += text === null ? `,${CSV_NULL}` : ',' + csvCell(text);
    }
    lines[at] = line;
  }
  return lines.join('\n') + '\n';
}

/**
 * A cell as COPY reads it back exactly. Quoted only when it must be (the
 * engine reads quoted cells at half the speed): quotes, separators, line
 * breaks, backslashes and edge blanks are kept safe inside quotes. An
 * unquoted empty cell reads as the empty string in a STRING column (other
 * columns never get one).
 */
export const csvCell = (text: string): string => (CSV_QUOTE_NEEDED.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const CSV_QUOTE_NEEDED = /[",\n\r\\]|^\s|\s$/;
/** the engine's CSV reader fails on a NUL character, and CSV_NULL would read as NULL */
const csvCarries = (text: string): boolean => text !== CSV_NULL && !text.includes('\u0000');

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
      await rm(file, { force: true });
    }
  }

  async close(): Promise<void> {
    if (this.folder !== null) await rm(this.folder, { recursive: true, force: true });
  }
}
