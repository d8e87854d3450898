/**
 * A CSV import, streamed into the spool. Most lines of a generated file are
 * plain (no quotes, no empty cells, numbers in their canonical form), and
 * such a line goes by a fast lane: checked and re-encoded straight into the
 * COPY text of its segment, with no record object in between (the general
 * reader's cells, records and their garbage cost ~3x the lane). Any other
 * line goes to the general reader (csv-reader.ts, then records.ts), which
 * also words every error: the lane never refuses a line, it only declines
 * it, and what it writes is what the general path would write.
 */
import { StringDecoder } from 'node:string_decoder';
import { KEY_PROPERTY, MAX_KEY_LENGTH } from '../names.js';
import type { ColumnType } from '../values.js';
import { CSV_NULL } from '../kuzu/csv.js';
import { CsvReader, lineError } from './csv-reader.js';
import { COLUMN_TYPES, csvRecord, headerOf, NameCache, type CellType, type Header, type ReadOptions } from './records.js';
import type { ImportSpool, Lane, LaneShape } from './spool.js';

/** lines read between writes of the spool's filled buffers (a body read whole is one piece) */
const LINES_PER_WRITE = 4096;
/** a line holding one of these goes to the general reader: quotes, escapes, a carriage return mid-line, NUL */
const NOT_PLAIN = /["\\\r\u0000]/;
/** a line without its end this long is read as it comes (the reader bounds its cells) */
const LONG_LINE = 64 * 1024;

/** reads a CSV body into the spool; 400 naming the line of the first bad one */
export async function spoolCsv(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, spool: ImportSpool, options: ReadOptions): Promise<void> {
  const names = new NameCache();
  let header: Header | null = null;
  let lane: FastLane | null = null;
  const reader = new CsvReader({ unquotedNull: '', maxCellChars: options.maxLineBytes }, (cells, line) => {
    if (header === null) {
      header = headerOf(cells, line);
      lane = new FastLane(header, spool, names);
    } else spool.addRecord(csvRecord(header, cells, line, names));
  });
  // whole lines are decoded at once, as one flat string (a line break never falls inside a UTF-8 sequence);
  // a line longer than LONG_LINE goes to the reader as it comes, through a decoder that keeps split sequences
  const decoder = new StringDecoder('utf8');
  let inLongLine = false;
  let rest: Buffer = Buffer.alloc(0);
  let lines = 0;
  for await (const chunk of body) {
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (inLongLine) {
      const lineEnd = bytes.indexOf(0x0a);
      reader.push(decoder.write(lineEnd === -1 ? bytes : bytes.subarray(0, lineEnd + 1)));
      if (lineEnd === -1) continue;
      inLongLine = false;
      bytes = bytes.subarray(lineEnd + 1);
    }
    if (rest.length > 0) bytes = Buffer.concat([rest, bytes]);
    const last = bytes.lastIndexOf(0x0a);
    if (last === -1) {
      inLongLine = bytes.length > LONG_LINE;
      if (inLongLine) reader.push(decoder.write(bytes));
      rest = inLongLine ? Buffer.alloc(0) : Buffer.from(bytes);
      continue;
    }
    rest = Buffer.from(bytes.subarray(last + 1));
    const text = bytes.toString('utf8', 0, last + 1);
    const clean = !NOT_PLAIN.test(text);
    for (let at = 0; at < text.length;) {
      const end = text.indexOf('\n', at);
      if (lane !== null && reader.atRecordStart && (lane as FastLane).take(text, at, end, reader.nextLine, clean)) reader.skipLine();
      else reader.push(text.slice(at, end + 1));
      at = end + 1;
      if ((lines += 1) % LINES_PER_WRITE === 0) await spool.writeFilled();
    }
    await spool.writeFilled();
  }
  reader.push(decoder.end() + rest.toString('utf8'));
  reader.end();
  if (header === null) throw lineError(1, 'the CSV has no header row');
}

interface PropertyColumn {
  readonly at: number;
  readonly type: CellType;
}

/** the lines of one header that can skip the general reader */
class FastLane {
  private readonly width: number;
  private readonly isNode: boolean;
  /** where the lead cells are: `label` and `_key`, or `type`, `_from` and `_to` */
  private readonly first: number;
  private readonly second: number;
  private readonly third: number;
  private readonly properties: PropertyColumn[] = [];
  private readonly names: string[] = [];
  private readonly types: ColumnType[] = [];
  /** the names of the last line taken: its table, and a relationship's end labels */
  private readonly recentNames = ['', '', ''];
  /** the lane of the last line taken, and its names */
  private last: Lane | null = null;
  private lastTable = '';
  private lastFrom = '';
  private lastTo = '';
  /** where each cell of the line being read starts and ends */
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  /** the first property cell when the property cells are the line's last ones, in order; else -1 */
  private readonly tail: number;
  /** `label` (nodes) or `type|from|to` (relationships) -> the lane of its segment */
  private readonly lanes = new Map<string, Lane>();

  constructor(
    header: Header,
    private readonly spool: ImportSpool,
    private readonly nameCache: NameCache,
  ) {
    this.width = header.columns.length;
    this.isNode = header.kind === 'node';
    const { lead } = header;
    this.first = this.isNode ? lead.get('label')! : lead.get('type')!;
    this.second = this.isNode ? lead.get(KEY_PROPERTY)! : lead.get('_from')!;
    this.third = this.isNode ? -1 : lead.get('_to')!;
    header.columns.forEach((column, at) => {
      if (column === null) return;
      this.properties.push({ at, type: column.type });
      this.names.push(column.name);
      this.types.push(COLUMN_TYPES[column.type]);
    });
    this.starts = new Int32Array(this.width);
    this.ends = new Int32Array(this.width);
    const firstProperty = this.width - this.properties.length;
    this.tail = this.properties.length > 0 && this.properties.every((property, at) => property.at === firstProperty + at) ? firstProperty : -1;
  }

  /**
   * Whether the line `text[start, end)` was taken (checked and written), false
   * when the general reader must read it. `clean`: the piece of text holds
   * no quote, escape, carriage return or NUL, so no line of it needs that check.
   */
  take(text: string, start: number, end: number, line: number, clean: boolean): boolean {
    const stop = end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
    if (stop === start) return false;
    if (!clean && NOT_PLAIN.test(text.slice(start, stop))) return false;
    // the cells' bounds, found by the native search: no array of cell strings
    const { starts, ends, width } = this;
    let count = 0;
    for (let from = start; ; count += 1) {
      if (count === width) return false;
      let comma = text.indexOf(',', from);
      if (comma === -1 || comma > stop) comma = stop;
      starts[count] = from;
      ends[count] = comma;
      if (comma === stop) break;
      from = comma + 1;
    }
    if (count + 1 !== width) return false;
    // a file repeats a few names on every line: the last ones are matched in place, not cut out and hashed
    const table = this.name(text, starts[this.first]!, ends[this.first]!, 0);
    if (table === null) return false;
    let encoded: string;
    let from = '';
    let to = '';
    if (this.isNode) {
      if (!isPlainKey(text, starts[this.second]!, ends[this.second]!)) return false;
      encoded = text.slice(starts[this.second], ends[this.second]);
    } else {
      const fromColon = text.indexOf(':', starts[this.second]);
      const toColon = text.indexOf(':', starts[this.third]);
      if (fromColon <= starts[this.second]! || fromColon >= ends[this.second]! || toColon <= starts[this.third]! || toColon >= ends[this.third]!) return false;
      const fromLabel = this.name(text, starts[this.second]!, fromColon, 1);
      const toLabel = this.name(text, starts[this.third]!, toColon, 2);
      if (fromLabel === null || toLabel === null) return false;
      from = fromLabel;
      to = toLabel;
      if (!isPlainKey(text, fromColon + 1, ends[this.second]!) || !isPlainKey(text, toColon + 1, ends[this.third]!)) return false;
      encoded = text.slice(fromColon + 1, ends[this.second]) + ',' + text.slice(toColon + 1, ends[this.third]);
    }
    for (let at = 0; at < this.properties.length; at += 1) {
      const property = this.properties[at]!;
      if (!fits(text, starts[property.at]!, ends[property.at]!, property.type)) return false;
    }
    // the property cells as they came: one slice when they are the line's last cells, in order
    if (this.tail >= 0) encoded += ',' + text.slice(starts[this.tail], stop);
    else for (const property of this.properties) encoded += ',' + text.slice(starts[property.at], ends[property.at]);
    let lane = this.last;
    if (lane === null || this.lastTable !== table || this.lastFrom !== from || this.lastTo !== to) {
      const id = this.isNode ? table : `${table}|${from}|${to}`;
      lane = this.lanes.get(id) ?? this.laneOf(table, from, to, line);
      // declined (the target's open segment has other columns, until a record on the general path gives it these): asked again next line
      if (lane === null) return false;
      this.lanes.set(id, lane);
      this.last = lane;
      this.lastTable = table;
      this.lastFrom = from;
      this.lastTo = to;
    }
    if (this.spool.append(lane, encoded + '\n')) return true;
    // a record on the general path gave the target a new column: ask again
    this.lanes.clear();
    this.last = null;
    return false;
  }

  /** the open segment for this target's rows, or null when the lane declines them (a refusal is left to the general path, in its words) */
  private laneOf(table: string, from: string, to: string, line: number): Lane | null {
    const shape: LaneShape = this.isNode
      ? { kind: 'NODE', table, names: this.names, types: this.types }
      : { kind: 'REL', table, from, to, names: this.names, types: this.types };
    try {
      return this.spool.laneFor(shape, line);
    } catch {
      return null;
    }
  }

  /** the valid label or type at `text[start, end)` (`slot`: which of the line's names it is), or null */
  private name(text: string, start: number, end: number, slot: number): string | null {
    const recent = this.recentNames[slot]!;
    if (end > start && end - start === recent.length && sameText(text, start, recent)) return recent;
    const name = text.slice(start, end);
    if (!this.nameCache.isLabel(name)) return null;
    this.recentNames[slot] = name;
    return name;
  }
}

/** whether `text` holds `name` at `start` (a loop: names are short, a native call per name costs more) */
function sameText(text: string, start: number, name: string): boolean {
  for (let at = 0; at < name.length; at += 1) if (text.charCodeAt(start + at) !== name.charCodeAt(at)) return false;
  return true;
}

/**
 * Whether `text[start, end)` is a cell COPY reads back exactly unquoted: the
 * line holds no quote, escape or line break, the cell no separator; so no
 * blank at either edge, and not the NULL text.
 */
function isPlain(text: string, start: number, end: number): boolean {
  if (end <= start) return false;
  const first = text.charCodeAt(start);
  const last = text.charCodeAt(end - 1);
  return first > 0x20 && first < 0x80 && last > 0x20 && last < 0x80 && !(end - start === CSV_NULL.length && text.startsWith(CSV_NULL, start));
}

const isPlainKey = (text: string, start: number, end: number): boolean => end - start <= MAX_KEY_LENGTH && isPlain(text, start, end);

/** whether `text[start, end)` is a cell the general path reads as a value of its column and writes back as the same text */
function fits(text: string, start: number, end: number, type: CellType): boolean {
  switch (type) {
    case 'string':
      return isPlain(text, start, end);
    case 'int':
      return isCanonicalInteger(text, start, end);
    case 'float': {
      const cell = text.slice(start, end);
      const value = Number(cell);
      return cell.length > 0 && Number.isFinite(value) && String(value) === cell;
    }
    case 'bool':
      return (end - start === 4 && text.startsWith('true', start)) || (end - start === 5 && text.startsWith('false', start));
  }
}

/** `0`, or an optional minus and up to 15 digits without a leading zero: always a safe integer, written back the same */
function isCanonicalInteger(text: string, start: number, end: number): boolean {
  let at = start;
  if (text.charCodeAt(at) === 0x2d) at += 1;
  const digits = end - at;
  if (digits < 1 || digits > 15) return false;
  const lead = text.charCodeAt(at);
  if (lead === 0x30) return digits === 1 && at === start;
  for (; at < end; at += 1) {
    const code = text.charCodeAt(at);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}
