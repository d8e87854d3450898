/**
 * An import's records, checked and written to private CSV files (0600, in a
 * 0700 folder of its own under DATA_DIR) before anything reaches the graph:
 * one or more segments per target (a node label, or a relationship type
 * between two labels), in the dialect COPY reads. A property's column type is
 * the stored column's, else what a CSV header declares, else its first
 * value's (see values.ts); a value that does not fit is refused naming its
 * line. A property first seen mid-way starts a new segment with one more
 * column, so no row is ever rewritten. Memory holds one buffer per segment.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { PRIVATE_FILE_MODE } from '../../file-modes.js';
import { ServiceError } from '../../errors.js';
import { CSV_NULL, csvNeeds, csvQuoted } from '../kuzu/csv.js';
import { columnTypeOf, toColumnText, type ColumnType } from '../values.js';
import { lineError } from './csv-reader.js';
import type { ImportRecord } from './records.js';

/** most targets (labels plus relationship type/label triples) one import writes */
const MAX_TARGETS = 200;
/** bytes a segment buffers before writing */
const FLUSH_BYTES = 256 * 1024;

export interface Segment {
  readonly file: string;
  /** the property columns after the lead cells (`_key`, or from and to keys) */
  readonly names: readonly string[];
  rows: number;
}

export interface Target {
  readonly kind: 'NODE' | 'REL';
  /** the node label or the relationship type */
  readonly table: string;
  /** REL: the labels of its ends */
  readonly from?: string;
  readonly to?: string;
  readonly segments: Segment[];
}

/** what the store holds already: table -> kind and column types */
export type StoredTables = ReadonlyMap<string, { readonly kind: 'NODE' | 'REL'; readonly columns: ReadonlyMap<string, ColumnType> }>;

interface Open {
  readonly segment: Segment;
  readonly stream: WriteStream;
  buffer: string;
}

/** what the rows of a fast lane (csv-lines.ts) are: a target, and the property columns each row gives, with their declared types */
export interface LaneShape {
  readonly kind: 'NODE' | 'REL';
  /** the node label or the relationship type */
  readonly table: string;
  readonly from?: string;
  readonly to?: string;
  readonly names: readonly string[];
  readonly types: readonly ColumnType[];
}

/** a target's open segment, as a fast lane appends to it */
export interface Lane {
  readonly target: Target;
  readonly open: Open;
}

export class ImportSpool {
  /** node targets by label, then relationship targets by `type|from|to`, in first-seen order */
  readonly targets = new Map<string, Target>();
  /** table -> column types, stored ones included */
  readonly columns = new Map<string, Map<string, ColumnType>>();
  readonly kinds = new Map<string, 'NODE' | 'REL'>();
  nodes = 0;
  relationships = 0;
  /** false when a value COPY's CSV cannot carry (the text NULL, a NUL character): load the rows as upserts */
  copyable = true;
  /** a value holds a line break (COPY then reads the files on one thread) */
  multiline = false;
  private readonly open = new Map<Target, Open>();
  /** segments a new column ended, closed once the records being added are buffered */
  private readonly ended: Open[] = [];
  private files = 0;
  /** the target of the last record added */
  private last: Target | null = null;

  private constructor(
    readonly dir: string,
    stored: StoredTables,
  ) {
    for (const [name, table] of stored) {
      this.kinds.set(name, table.kind);
      this.columns.set(name, new Map(table.columns));
    }
  }

  static async create(parent: string, stored: StoredTables): Promise<ImportSpool> {
    return new ImportSpool(await mkdtemp(join(parent, 'import-')), stored);
  }

  /** checks and buffers the records (no await per record), then writes the segments that filled up */
  async add(records: readonly ImportRecord[]): Promise<void> {
    for (let at = 0; at < records.length; at += 1) {
      // a large piece of input is written as it goes: memory holds about one buffer per segment
      if ((at & 1023) === 1023) await this.writeFilled();
      this.addRecord(records[at]!);
    }
    await this.writeFilled();
  }

  /** checks and buffers one record (writeFilled writes what filled up) */
  addRecord(record: ImportRecord): void {
    // a file's records mostly share the previous one's target: its checks and lookup are not repeated
    let last = this.last;
    if (record.kind === 'node') {
      if (last?.kind !== 'NODE' || last.table !== record.label) last = this.nodeTarget(record.label, record.line);
      this.write(last, record.key, null, record, record.label);
      this.nodes += 1;
    } else {
      if (last?.kind !== 'REL' || last.table !== record.type || last.from !== record.from.label || last.to !== record.to.label) {
        last = this.relTarget(record.type, record.from.label, record.to.label, record.line);
      }
      this.write(last, record.from.key, record.to.key, record, record.type);
      this.relationships += 1;
    }
    this.last = last;
  }

  /**
   * The fast lane's way in (csv-lines.ts): the open segment of the shape's
   * target when it has exactly the shape's columns, stored or declared with
   * the shape's types (a new segment when the target has none yet); null
   * otherwise, and such rows go through add(). Throws what add() would for
   * a record of that target (a name used as both kinds, too many targets).
   */
  laneFor(shape: LaneShape, line: number): Lane | null {
    const columns = this.columns.get(shape.table);
    for (let at = 0; at < shape.names.length; at += 1) {
      const type = columns?.get(shape.names[at]!);
      if (type !== undefined && type !== shape.types[at]) return null;
    }
    const target = shape.kind === 'NODE' ? this.nodeTarget(shape.table, line) : this.relTarget(shape.table, shape.from!, shape.to!, line);
    const open = this.open.get(target);
    if (open !== undefined) {
      const { names } = open.segment;
      return names.length === shape.names.length && names.every((name, at) => name === shape.names[at]) ? { target, open } : null;
    }
    let known = columns;
    if (!known) this.columns.set(shape.table, (known = new Map<string, ColumnType>()));
    for (let at = 0; at < shape.names.length; at += 1) if (!known.has(shape.names[at]!)) known.set(shape.names[at]!, shape.types[at]!);
    return { target, open: this.openSegment(target, shape.names) };
  }

  /** one row already in COPY's CSV, line break included, into the lane's segment; false when that is no longer the target's open one */
  append(lane: Lane, row: string): boolean {
    if (this.open.get(lane.target) !== lane.open) return false;
    lane.open.buffer += row;
    lane.open.segment.rows += 1;
    if (lane.target.kind === 'NODE') this.nodes += 1;
    else this.relationships += 1;
    return true;
  }

  /** writes the buffers that filled up, and closes the segments a new column ended */
  async writeFilled(): Promise<void> {
    for (const open of this.open.values()) if (open.buffer.length >= FLUSH_BYTES) await this.flush(open);
    for (const open of this.ended.splice(0)) await this.close(open);
  }

  /** every buffer written and every file closed */
  async finish(): Promise<void> {
    for (const open of [...this.ended.splice(0), ...this.open.values()]) await this.close(open);
    this.open.clear();
  }

  async remove(): Promise<void> {
    for (const open of [...this.open.values(), ...this.ended]) open.stream.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** a node label's target (the name checked against its use as a relationship type) */
  private nodeTarget(label: string, line: number): Target {
    this.kindOf(label, 'NODE', line);
    return this.target(label, 'NODE', line);
  }

  /** a relationship type's target between two labels (each name checked against its other use) */
  private relTarget(type: string, from: string, to: string, line: number): Target {
    this.kindOf(from, 'NODE', line);
    this.kindOf(to, 'NODE', line);
    this.kindOf(type, 'REL', line);
    return this.target(`${type}|${from}|${to}`, 'REL', line, { table: type, from, to });
  }

  private kindOf(name: string, kind: 'NODE' | 'REL', line: number): void {
    const known = this.kinds.get(name);
    if (known === undefined) this.kinds.set(name, kind);
    else if (known !== kind) {
      throw lineError(
        line,
        `"${name}" is ${known === 'NODE' ? 'a node label' : 'a relationship type'} here; labels and relationship types need distinct names`,
      );
    }
  }

  private target(id: string, kind: 'NODE' | 'REL', line: number, rel?: { table: string; from: string; to: string }): Target {
    let target = this.targets.get(id);
    if (target) return target;
    if (this.targets.size >= MAX_TARGETS) throw lineError(line, `an import writes at most ${MAX_TARGETS} labels and relationship types`);
    target = rel ? { kind, segments: [], ...rel } : { kind, table: id, segments: [] };
    this.targets.set(id, target);
    return target;
  }

  private write(target: Target, first: string, second: string | null, record: ImportRecord, table: string): void {
    let columns = this.columns.get(table);
    if (!columns) this.columns.set(table, (columns = new Map<string, ColumnType>()));
    let open = this.open.get(target);
    for (const name in record.props) {
      const value = record.props[name];
      let type = columns.get(name);
      if (type === undefined) {
        const picked = record.declared?.get(name) ?? columnTypeOf(value);
        if (picked === null) continue;
        columns.set(name, (type = picked));
      }
      if (open === undefined || !open.segment.names.includes(name)) open = this.newSegment(target, open, name);
    }
    open ??= this.newSegment(target, open, null);
    let text = second === null ? this.cell(first) : this.cell(first) + ',' + this.cell(second);
    const { names } = open.segment;
    for (let at = 0; at < names.length; at += 1) {
      const name = names[at]!;
      let cell: string | null;
      try {
        cell = toColumnText(record.props[name], columns.get(name)!, table, name);
      } catch (error) {
        throw error instanceof ServiceError ? lineError(record.line, error.message) : error;
      }
      text += cell === null ? `,${CSV_NULL}` : `,${this.cell(cell)}`;
    }
    open.buffer += text + '\n';
    open.segment.rows += 1;
  }

  /** a cell as COPY reads it; notes what COPY cannot carry */
  private cell(text: string): string {
    const needs = csvNeeds(text);
    if (needs === 'plain') return text;
    if (needs === 'none') this.copyable = false;
    if (!this.multiline && (text.includes('\n') || text.includes('\r'))) this.multiline = true;
    return csvQuoted(text);
  }

  /** a segment with the current one's columns plus `added` (the current one is closed at the end of the records being added) */
  private newSegment(target: Target, current: Open | undefined, added: string | null): Open {
    if (current) this.ended.push(current);
    return this.openSegment(target, [...(current?.segment.names ?? []), ...(added === null ? [] : [added])]);
  }

  private openSegment(target: Target, names: readonly string[]): Open {
    const segment: Segment = { file: join(this.dir, `${(this.files += 1)}.csv`), names, rows: 0 };
    target.segments.push(segment);
    const open: Open = { segment, stream: createWriteStream(segment.file, { mode: PRIVATE_FILE_MODE }), buffer: '' };
    this.open.set(target, open);
    return open;
  }

  private async flush(open: Open): Promise<void> {
    const text = open.buffer;
    open.buffer = '';
    if (!open.stream.write(text)) await once(open.stream, 'drain');
  }

  private async close(open: Open): Promise<void> {
    await this.flush(open);
    open.stream.end();
    await once(open.stream, 'finish');
  }
}
