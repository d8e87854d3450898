/**
 * A realm's tables, which grow as records arrive: a node table per label
 * (`_key` STRING PRIMARY KEY), a relationship table per type with a FROM/TO
 * pair per pair of labels it has joined, a column per property (types: see
 * values.ts). Read from the database at open (and after a failed or user
 * write), planned per batch before any of it runs, then applied.
 */
import { ServiceError } from '../../errors.js';
import type { Properties, WriteBatch } from '../batches.js';
import { isValidLabel, KEY_PROPERTY, quote } from '../names.js';
import { asText, columnTypeFromEngine, columnTypeOf, fitsColumn, toColumnText, type ColumnType } from '../values.js';
import { FTS_INDEX } from './fts-index.js';
import type { KuzuSession } from './session.js';

export interface TableSchema {
  readonly kind: 'NODE' | 'REL';
  readonly columns: Map<string, ColumnType>;
  /** REL: `From>To` label pairs */
  readonly pairs: Set<string>;
  /** NODE: the columns the full-text index covers (null: no index) */
  ftsColumns: string[] | null;
}

/** what planning needs of a table */
interface TableShape {
  readonly kind: 'NODE' | 'REL';
  readonly columns: ReadonlyMap<string, ColumnType>;
  readonly pairs: ReadonlySet<string>;
}

/** a table to create, or the FROM/TO pair and columns to add to it; `after`: the table once changed */
export interface TableChange {
  readonly name: string;
  readonly kind: 'NODE' | 'REL';
  readonly create: boolean;
  /** REL: the rows' `From>To` pair */
  readonly pair: string | undefined;
  readonly addPair: boolean;
  readonly added: readonly (readonly [string, ColumnType])[];
  readonly after: TableShape;
}

export class GraphSchema {
  /** by table name */
  readonly tables = new Map<string, TableSchema>();

  constructor(private readonly session: KuzuSession) {}

  /** the table named so, when it is of this kind */
  table(name: string, kind: 'NODE' | 'REL'): TableSchema | undefined {
    const table = this.tables.get(name);
    return table?.kind === kind ? table : undefined;
  }

  /** the names of the tables of a kind */
  names(kind: 'NODE' | 'REL'): string[] {
    return [...this.tables.entries()].filter(([, table]) => table.kind === kind).map(([name]) => name);
  }

  /** reads every table, its columns, pairs and full-text index from the database */
  async load(): Promise<void> {
    const { session, tables } = this;
    tables.clear();
    for (const row of await session.run('CALL show_tables() RETURN name, type')) {
      const name = asText(row['name']);
      const kind = row['type'] === 'REL' ? 'REL' : row['type'] === 'NODE' ? 'NODE' : null;
      // the full-text index keeps its own tables (names starting with a digit or `_`)
      if (!kind || !isValidLabel(name)) continue;
      const columns = new Map<string, ColumnType>();
      for (const column of await session.run(`CALL table_info('${name}') RETURN name, type`)) {
        columns.set(asText(column['name']), columnTypeFromEngine(asText(column['type'])));
      }
      const pairs = new Set<string>();
      if (kind === 'REL') {
        for (const pair of await session.run(`CALL show_connection('${name}') RETURN *`)) {
          pairs.add(`${asText(pair['source table name'])}>${asText(pair['destination table name'])}`);
        }
      }
      tables.set(name, { kind, columns, pairs, ftsColumns: null });
    }
    for (const index of await session.run('CALL show_indexes() RETURN table_name, index_name, property_names')) {
      const table = tables.get(asText(index['table_name']));
      if (table && index['index_name'] === FTS_INDEX) table.ftsColumns = (index['property_names'] as string[]).map(String);
    }
  }

  /**
   * The schema changes a batch needs, checked before any of it runs: 400
   * when a value does not fit its column or a name is already the other
   * kind. Tables are planned in the order the batch writes them, each against
   * the schema as the batch's earlier changes leave it.
   */
  plan(batch: WriteBatch): TableChange[] {
    const planned = new Map<string, TableShape>();
    const changes: TableChange[] = [];
    const plan = (name: string, kind: 'NODE' | 'REL', rows: Iterable<Properties>, pair?: string): void => {
      const change = planTable(planned.get(name) ?? this.tables.get(name), name, kind, rows, pair);
      planned.set(name, change.after);
      if (change.create || change.addPair || change.added.length > 0) changes.push(change);
    };
    if (batch.kind === 'nodes') {
      for (const [label, keyed] of batch.byLabel) plan(label, 'NODE', keyed.values());
    } else {
      for (const group of batch.groups.values()) {
        plan(group.from, 'NODE', []);
        plan(group.to, 'NODE', []);
        plan(
          group.type,
          'REL',
          mapIterable(group.edges.values(), (edge) => edge.props),
          `${group.from}>${group.to}`,
        );
      }
    }
    return changes;
  }

  /**
   * The schema changes that give tables these columns (and a relationship
   * table this FROM/TO pair), in the order given: 400 when a column is
   * stored with another type or a name is already the other kind.
   */
  planShapes(
    shapes: readonly { readonly name: string; readonly kind: 'NODE' | 'REL'; readonly columns: ReadonlyMap<string, ColumnType>; readonly pair?: string }[],
  ): TableChange[] {
    const planned = new Map<string, TableShape>();
    const changes: TableChange[] = [];
    for (const { name, kind, columns: wanted, pair } of shapes) {
      const existing = planned.get(name) ?? this.tables.get(name);
      const change = planTable(existing, name, kind, [], pair);
      const columns = new Map(change.after.columns);
      const added = [...change.added];
      for (const [column, type] of wanted) {
        const have = columns.get(column);
        if (have === undefined) {
          columns.set(column, type);
          added.push([column, type]);
        } else if (have !== type && column !== KEY_PROPERTY) {
          throw new ServiceError('validation_error', `property ${name}.${column} holds ${have} values; the import gives ${type}`, {
            label: name,
            property: column,
          });
        }
      }
      const after = { ...change.after, columns };
      planned.set(name, after);
      if (change.create || change.addPair || added.length > 0) changes.push({ ...change, added, after });
    }
    return changes;
  }

  /** creates a planned table, or adds its FROM/TO pair and columns (inside the open transaction) */
  async apply(change: TableChange): Promise<void> {
    const { name, kind, after } = change;
    const [from, to] = (change.pair ?? '>').split('>') as [string, string];
    if (change.create) {
      const definitions = change.added.map(([property, type]) => `${quote(property)} ${type}`);
      const head = kind === 'NODE' ? [`${quote(KEY_PROPERTY)} STRING PRIMARY KEY`] : [`FROM ${quote(from)} TO ${quote(to)}`];
      await this.session.exec(`CREATE ${kind} TABLE ${quote(name)}(${[...head, ...definitions].join(', ')})`);
      this.tables.set(name, { kind, columns: new Map(after.columns), pairs: new Set(after.pairs), ftsColumns: null });
      return;
    }
    const table = this.tables.get(name)!;
    if (change.addPair) {
      await this.session.exec(`ALTER TABLE ${quote(name)} ADD FROM ${quote(from)} TO ${quote(to)}`);
      table.pairs.add(change.pair!);
    }
    for (const [property, type] of change.added) {
      await this.session.exec(`ALTER TABLE ${quote(name)} ADD ${quote(property)} ${type}`);
      table.columns.set(property, type);
    }
  }
}

/**
 * What taking these rows changes in a table: a property's first non-null
 * value picks its column type, and every value must fit its column (400
 * otherwise), as must the name's kind.
 */
function planTable(existing: TableShape | undefined, name: string, kind: 'NODE' | 'REL', rows: Iterable<Properties>, pair: string | undefined): TableChange {
  if (existing && existing.kind !== kind) {
    throw new ServiceError(
      'validation_error',
      `"${name}" is already a ${existing.kind === 'NODE' ? 'node label' : 'relationship type'} in this realm; labels and relationship types need distinct names`,
      { name },
    );
  }
  const columns = new Map<string, ColumnType>(existing?.columns ?? (kind === 'NODE' ? [[KEY_PROPERTY, 'STRING']] : []));
  const added: [string, ColumnType][] = [];
  for (const row of rows) {
    for (const property in row) {
      const value = row[property];
      const type = columns.get(property);
      if (type !== undefined) {
        if (!fitsColumn(value, type)) toColumnText(value, type, name, property);
        continue;
      }
      const picked = columnTypeOf(value);
      if (picked === null) continue;
      columns.set(property, picked);
      added.push([property, picked]);
    }
  }
  const addPair = existing !== undefined && pair !== undefined && !existing.pairs.has(pair);
  const pairs = new Set(existing?.pairs ?? []);
  if (pair) pairs.add(pair);
  return { name, kind, create: !existing, pair, addPair, added, after: { kind, columns, pairs } };
}

function* mapIterable<T, U>(items: Iterable<T>, map: (item: T) => U): Iterable<U> {
  for (const item of items) yield map(item);
}
