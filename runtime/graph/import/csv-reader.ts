/**
 * A streaming CSV reader (RFC 4180: `,` separates, `"` quotes, `""` is a
 * quote inside quotes, quoted cells may hold line breaks; `\r\n` or `\n` end
 * a record). Text is pushed in pieces as it arrives; each complete record is
 * handed over with the line it starts on. A cell over `maxCellChars`, or text
 * after a closing quote, fails naming the line. Blank lines are skipped.
 */
import { ServiceError } from '../../errors.js';

export type CsvCell = string | null;

export interface CsvReaderOptions {
  /** an unquoted cell of exactly this text reads as null (a quoted one stays text) */
  readonly unquotedNull: string;
  readonly maxCellChars: number;
}

const COMMA = 0x2c;
const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

type State = 'start' | 'plain' | 'quoted' | 'quote-in-quoted';

export class CsvReader {
  private state: State = 'start';
  private cell = '';
  private cells: CsvCell[] = [];
  private line = 1;
  private recordLine = 1;

  constructor(
    private readonly options: CsvReaderOptions,
    private readonly onRecord: (cells: CsvCell[], line: number) => void,
  ) {}

  push(text: string): void {
    const length = text.length;
    let at = 0;
    while (at < length) {
      const code = text.charCodeAt(at);
      switch (this.state) {
        case 'start':
          if (code === QUOTE) {
            this.state = 'quoted';
            at += 1;
          } else if (code === COMMA) {
            this.endCell(false);
            at += 1;
          } else if (code === LF) {
            this.endRecord(false);
            at += 1;
          } else if (code === CR) at += 1;
          else this.state = 'plain';
          break;
        case 'plain': {
          let end = at;
          while (end < length) {
            const inner = text.charCodeAt(end);
            if (inner === COMMA || inner === LF || inner === CR || inner === QUOTE) break;
            end += 1;
          }
          this.append(text, at, end);
          at = end;
          if (at >= length) break;
          const stop = text.charCodeAt(at);
          if (stop === QUOTE) throw this.fail('a quote inside an unquoted cell (quote the whole cell and double the quote)');
          if (stop === CR) {
            at += 1;
            break;
          }
          if (stop === COMMA) this.endCell(false);
          else this.endRecord(false);
          at += 1;
          break;
        }
        case 'quoted': {
          let end = at;
          while (end < length) {
            const inner = text.charCodeAt(end);
            if (inner === QUOTE) break;
            if (inner === LF) this.line += 1;
            end += 1;
          }
          this.append(text, at, end);
          at = end;
          if (at < length) {
            this.state = 'quote-in-quoted';
            at += 1;
          }
          break;
        }
        case 'quote-in-quoted':
          if (code === QUOTE) {
            this.append('"', 0, 1);
            this.state = 'quoted';
          } else if (code === COMMA) this.endCell(true);
          else if (code === LF) this.endRecord(true);
          else if (code !== CR) throw this.fail('text after a closing quote');
          at += 1;
          break;
      }
    }
  }

  /** whether the reader is between records (not inside one that a pushed piece began) */
  get atRecordStart(): boolean {
    return this.state === 'start' && this.cells.length === 0 && this.cell === '';
  }

  /** the line the next record starts on */
  get nextLine(): number {
    return this.recordLine;
  }

  /** a line read by someone else (between records only): the line numbers stay true */
  skipLine(): void {
    this.line += 1;
    this.recordLine = this.line;
  }

  /** the end of the input: a last record without its line break is complete too */
  end(): void {
    if (this.state === 'quoted') throw this.fail('a quoted cell is not closed');
    if (this.state !== 'start' || this.cells.length > 0) this.endRecord(this.state === 'quote-in-quoted');
  }

  private append(text: string, from: number, to: number): void {
    if (to <= from) return;
    this.cell += text.slice(from, to);
    if (this.cell.length > this.options.maxCellChars) throw this.fail(`a cell is longer than ${this.options.maxCellChars} characters`);
  }

  private endCell(quoted: boolean): void {
    this.cells.push(!quoted && this.cell === this.options.unquotedNull ? null : this.cell);
    this.cell = '';
    this.state = 'start';
  }

  private endRecord(quoted: boolean): void {
    this.endCell(quoted);
    const cells = this.cells;
    this.cells = [];
    const line = this.recordLine;
    this.line += 1;
    this.recordLine = this.line;
    // a blank line: one empty unquoted cell
    if (cells.length === 1 && !quoted && (cells[0] === null || cells[0] === '')) return;
    this.onRecord(cells, line);
  }

  private fail(problem: string): ServiceError {
    return lineError(this.recordLine, problem);
  }
}

/** 400 naming the input line */
export function lineError(line: number, problem: string): ServiceError {
  return new ServiceError('validation_error', `line ${line}: ${problem}`, { line });
}
