/**
 * What a bulk import reads: NDJSON or CSV text, streamed, as checked records
 * with the line each came from.
 *
 * NDJSON, one object a line: a node `{"label": L, "_key": K, ...properties}`
 * or a relationship `{"type": T, "_from": "Label:key", "_to": "Label:key",
 * ...properties}`. CSV: a header row, then all nodes (columns `label`,
 * `_key`, properties) or all relationships (`type`, `_from`, `_to`,
 * properties); a property column is `name` (text) or `name:int`,
 * `name:float`, `name:bool`, `name:string`; an empty cell gives no value.
 */
import { findTooDeep } from '../../json-depth.js';
import { isValidKey, isValidLabel, isValidProperty, KEY_PROPERTY, MAX_KEY_LENGTH, parseNodeId } from '../names.js';
import type { ColumnType } from '../values.js';
import { lineError, type CsvCell } from './csv-reader.js';

export type ImportFormat = 'ndjson' | 'csv';
/** property -> the column type a CSV header declares */
type Declared = ReadonlyMap<string, ColumnType>;

export type ImportRecord =
  | {
      readonly kind: 'node';
      readonly line: number;
      readonly label: string;
      readonly key: string;
      readonly props: Record<string, unknown>;
      /** CSV: the column types its header names */
      readonly declared?: Declared;
    }
  | {
      readonly kind: 'rel';
      readonly line: number;
      readonly type: string;
      readonly from: { readonly label: string; readonly key: string };
      readonly to: { readonly label: string; readonly key: string };
      readonly props: Record<string, unknown>;
      readonly declared?: Declared;
    };

export interface ReadOptions {
  readonly maxJsonDepth: number;
  /** the longest NDJSON line or CSV cell */
  readonly maxLineBytes: number;
}

const NODE_FIELDS = new Set(['label', KEY_PROPERTY]);
const REL_FIELDS = new Set(['type', '_from', '_to']);

/**
 * Records in the pieces the input arrives in (one array per chunk): each
 * chunk's complete lines are depth-checked in one pass over their bytes and
 * decoded as one string (per-line decoding costs more than the parse).
 */
export async function* ndjsonRecords(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: ReadOptions): AsyncGenerator<ImportRecord[]> {
  let rest: Buffer = Buffer.alloc(0);
  let line = 0;
  const names = new NameCache();
  const lines = (bytes: Buffer): ImportRecord[] => {
    const out: ImportRecord[] = [];
    const deep = findTooDeep(bytes, options.maxJsonDepth, true);
    const deepLine = deep === null ? -1 : line + 1 + countNewlines(bytes, deep.offset);
    for (const text of bytes.toString('utf8').split('\n')) {
      line += 1;
      if (text.length > options.maxLineBytes / 3 && Buffer.byteLength(text) > options.maxLineBytes)
        throw lineError(line, `longer than ${options.maxLineBytes} bytes`);
      if (line === deepLine) throw lineError(line, `nests deeper than ${options.maxJsonDepth}`);
      // a line starting with `{` is not blank: no trimmed copy of every line
      if (text.charCodeAt(0) !== 0x7b && text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw lineError(line, `not JSON: ${(error as Error).message}`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(line, 'not a JSON object');
      out.push(recordOf(value as Record<string, unknown>, line, names));
    }
    return out;
  };
  for await (const chunk of body) {
    const bytes = rest.length === 0 ? Buffer.from(chunk) : Buffer.concat([rest, chunk]);
    const last = bytes.lastIndexOf(0x0a);
    if (last === -1) {
      rest = bytes;
      if (rest.length > options.maxLineBytes) throw lineError(line + 1, `longer than ${options.maxLineBytes} bytes`);
      continue;
    }
    rest = bytes.subarray(last + 1);
    if (rest.length > options.maxLineBytes) throw lineError(line + 1 + countNewlines(bytes, last), `longer than ${options.maxLineBytes} bytes`);
    yield lines(bytes.subarray(0, last));
  }
  if (rest.length > 0) yield lines(rest);
}

function countNewlines(bytes: Buffer, before: number): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1 && at < before; at = bytes.indexOf(0x0a, at + 1)) count += 1;
  return count;
}

/**
 * The names an import has seen valid (labels, types, property names): a
 * file repeats a few names on every line, and each is checked once.
 */
export class NameCache {
  private readonly labels = new Set<string>();
  private readonly properties = new Set<string>();

  label(value: unknown, field: string, line: number): string {
    if (typeof value === 'string' && this.labels.has(value)) return value;
    const checked = name(value, field, line);
    this.labels.add(checked);
    return checked;
  }

  /** whether a label or relationship type is valid (the fast lane's check: it never throws) */
  isLabel(value: string): boolean {
    if (this.labels.has(value)) return true;
    if (!isValidLabel(value)) return false;
    this.labels.add(value);
    return true;
  }

  property(name: string, line: number): void {
    if (this.properties.has(name)) return;
    if (!isValidProperty(name)) throw lineError(line, `invalid property name "${name.slice(0, 80)}"`);
    this.properties.add(name);
  }

  /** `Label:key` as its two parts (parseNodeId's rule, the label checked once) */
  end(value: unknown, field: string, line: number): { label: string; key: string } {
    if (typeof value === 'string') {
      const colon = value.indexOf(':');
      if (colon > 0 && value.length - colon - 1 <= MAX_KEY_LENGTH && value.length - colon > 1) {
        const label = value.slice(0, colon);
        if (this.labels.has(label)) return { label, key: value.slice(colon + 1) };
      }
    }
    const parsed = end(value, field, line);
    this.labels.add(parsed.label);
    return parsed;
  }
}

/** an NDJSON object as a node or relationship record */
function recordOf(object: Record<string, unknown>, line: number, names: NameCache): ImportRecord {
  const isRel = 'type' in object || '_from' in object || '_to' in object;
  if (isRel && 'label' in object) throw lineError(line, 'a line is a node ("label", "_key") or a relationship ("type", "_from", "_to"), not both');
  const props: Record<string, unknown> = {};
  const fields = isRel ? REL_FIELDS : NODE_FIELDS;
  for (const field in object) {
    if (fields.has(field)) continue;
    names.property(field, line);
    const value = object[field];
    if (value !== null && value !== undefined) props[field] = value;
  }
  if (isRel)
    return {
      kind: 'rel',
      line,
      type: names.label(object['type'], 'type', line),
      from: names.end(object['_from'], '_from', line),
      to: names.end(object['_to'], '_to', line),
      props,
    };
  return { kind: 'node', line, label: names.label(object['label'], 'label', line), key: key(object[KEY_PROPERTY], line), props };
}

function name(value: unknown, field: string, line: number): string {
  if (!isValidLabel(value)) throw lineError(line, `"${field}" must be letters, digits and "_", starting with a letter (at most 64)`);
  return value;
}

function key(value: unknown, line: number): string {
  if (!isValidKey(value)) throw lineError(line, `"_key" must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`);
  return value;
}

function end(value: unknown, field: string, line: number): { label: string; key: string } {
  if (typeof value !== 'string') throw lineError(line, `"${field}" must be a node id Label:key`);
  try {
    return parseNodeId(value);
  } catch {
    throw lineError(line, `"${field}" must be a node id Label:key`);
  }
}

export type CellType = 'string' | 'int' | 'float' | 'bool';
interface Column {
  readonly name: string;
  readonly type: CellType;
}
export interface Header {
  readonly kind: 'node' | 'rel';
  /** where the lead cells are: `label` and `_key`, or `type`, `_from` and `_to` */
  readonly lead: Map<string, number>;
  readonly columns: (Column | null)[];
  readonly declared: Declared;
}
export const COLUMN_TYPES: Record<CellType, ColumnType> = { string: 'STRING', int: 'INT64', float: 'DOUBLE', bool: 'BOOLEAN' };

export function headerOf(cells: readonly CsvCell[], line: number): Header {
  const names = cells.map((cell) => cell ?? '');
  const kind = names.includes('type') || names.includes('_from') ? 'rel' : 'node';
  const leadNames = kind === 'rel' ? ['type', '_from', '_to'] : ['label', KEY_PROPERTY];
  const lead = new Map<string, number>();
  const seen = new Set<string>();
  const columns = names.map((text, at): Column | null => {
    if (leadNames.includes(text)) {
      lead.set(text, at);
      return null;
    }
    const colon = text.lastIndexOf(':');
    const columnName = colon === -1 ? text : text.slice(0, colon);
    const type = colon === -1 ? 'string' : text.slice(colon + 1);
    if (!isValidProperty(columnName) || columnName === KEY_PROPERTY) throw lineError(line, `invalid column name "${text.slice(0, 80)}"`);
    if (type !== 'string' && type !== 'int' && type !== 'float' && type !== 'bool')
      throw lineError(line, `column ${columnName}: the type is string, int, float or bool`);
    if (seen.has(columnName)) throw lineError(line, `column ${columnName} is given twice`);
    seen.add(columnName);
    return { name: columnName, type };
  });
  for (const needed of leadNames) if (!lead.has(needed)) throw lineError(line, `the header needs the columns ${leadNames.join(', ')}`);
  const declared = new Map(columns.filter((column) => column !== null).map((column) => [column.name, COLUMN_TYPES[column.type]]));
  return { kind, lead, columns, declared };
}

export function csvRecord(header: Header, cells: readonly CsvCell[], line: number, names: NameCache): ImportRecord {
  if (cells.length !== header.columns.length) throw lineError(line, `${cells.length} cells where the header has ${header.columns.length}`);
  const props: Record<string, unknown> = {};
  for (let at = 0; at < cells.length; at += 1) {
    const column = header.columns[at];
    const cell = cells[at];
    if (column && cell !== null && cell !== undefined) props[column.name] = cellValue(cell, column, line);
  }
  const { declared, lead } = header;
  if (header.kind === 'rel') {
    return {
      kind: 'rel',
      line,
      type: names.label(cells[lead.get('type')!] ?? null, 'type', line),
      from: names.end(cells[lead.get('_from')!] ?? null, '_from', line),
      to: names.end(cells[lead.get('_to')!] ?? null, '_to', line),
      props,
      declared,
    };
  }
  return {
    kind: 'node',
    line,
    label: names.label(cells[lead.get('label')!] ?? null, 'label', line),
    key: key(cells[lead.get(KEY_PROPERTY)!] ?? null, line),
    props,
    declared,
  };
}

function cellValue(cell: string, column: Column, line: number): unknown {
  switch (column.type) {
    case 'string':
      return cell;
    case 'int': {
      const value = Number(cell.trim());
      if (cell.trim() === '' || !Number.isSafeInteger(value)) throw lineError(line, `column ${column.name}: "${cell.slice(0, 40)}" is not an integer`);
      return value;
    }
    case 'float': {
      const value = Number(cell.trim());
      if (cell.trim() === '' || !Number.isFinite(value)) throw lineError(line, `column ${column.name}: "${cell.slice(0, 40)}" is not a number`);
      return value;
    }
    case 'bool': {
      const text = cell.trim().toLowerCase();
      if (text !== 'true' && text !== 'false') throw lineError(line, `column ${column.name}: "${cell.slice(0, 40)}" is not true or false`);
      return text === 'true';
    }
  }
}
