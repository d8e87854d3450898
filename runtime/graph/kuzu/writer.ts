/**
 * Writes one prepared batch inside the open transaction: its schema changes,
 * then its rows. Keys that may be stored (see key-sets.ts) are looked up:
 * new records are appended with COPY (the engine's bulk path, ~10x MERGE),
 * stored ones updated only when a given property changed; missing end nodes
 * of relationships are created with only their key.
 */
import { pairKey, type Edge, type EdgeGroup, type EdgeGroups, type NodesByLabel, type Properties, type WriteBatch } from '../batches.js';
import { KEY_PROPERTY, quote } from '../names.js';
import { asText, toColumnText, type ColumnType } from '../values.js';
import { CSV_OPTIONS, csvOf, type CsvStaging } from './csv.js';
import { pairTableOf, type KeySets } from './key-sets.js';
import { edgeRowStatements, nodeRowStatements, relCopyTarget } from './row-statements.js';
import type { GraphSchema, TableChange } from './schema.js';
import type { KuzuSession } from './session.js';

type StoredRecords = Map<string, Record<string, unknown>>;

export class BatchWriter {
  constructor(
    private readonly session: KuzuSession,
    private readonly schema: GraphSchema,
    private readonly keySets: KeySets,
    private readonly staging: CsvStaging,
  ) {}

  /** a batch's schema changes (planned by GraphSchema.plan), then its rows */
  async write(batch: WriteBatch, changes: readonly TableChange[]): Promise<void> {
    for (const change of changes) {
      await this.schema.apply(change);
      // a new table, or a relationship table's new FROM/TO pair, holds nothing: no read of its keys
      if (change.create && change.kind === 'NODE') this.keySets.created(change.name);
      else if ((change.create || change.addPair) && change.kind === 'REL') {
        const [from, to] = change.pair!.split('>') as [string, string];
        this.keySets.created(pairTableOf({ type: change.name, from, to }));
      }
    }
    if (batch.kind === 'nodes') await this.writeNodes(batch.byLabel);
    else await this.writeRelationships(batch.groups);
  }

  private async writeNodes(byLabel: NodesByLabel): Promise<void> {
    for (const [label, keyed] of byLabel) {
      const columns = this.schema.tables.get(label)!.columns;
      const known = await this.keySets.of(label);
      const candidates = known ? [...keyed.keys()].filter((key) => known.has(key)) : [...keyed.keys()];
      const stored: StoredRecords = new Map();
      if (candidates.length > 0) {
        // one row holding a list: the driver converts a row at a time, and 10k rows cost ~5x one list of 10k
        const found = await this.session.run(`UNWIND $keys AS k MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: k}) RETURN collect(n) AS nodes`, {
          keys: candidates,
        });
        for (const node of (found[0]?.['nodes'] ?? []) as Record<string, unknown>[]) stored.set(asText(node[KEY_PROPERTY]), node);
      }
      const fresh: Properties[] = [];
      const freshKeys: string[] = [];
      const changed: Properties[] = [];
      for (const [key, props] of keyed) {
        const before = stored.size > 0 ? stored.get(key) : undefined;
        if (before === undefined) {
          fresh.push(props);
          freshKeys.push(key);
        } else if (differs(label, props, before, columns)) changed.push(props);
      }
      if (fresh.length > 0) {
        const names = [...columns.keys()].filter((name) => name !== KEY_PROPERTY);
        const csv =
          this.staging.enabled &&
          csvOf(
            fresh,
            (props) => [props[KEY_PROPERTY] as string],
            (props) => props,
            label,
            names,
            columns,
          );
        if (csv) await this.copy(csv, (file) => `COPY ${quote(label)}(${[KEY_PROPERTY, ...names].map(quote).join(', ')}) FROM '${file}' (${CSV_OPTIONS})`);
        else await this.session.runAll(nodeRowStatements(label, fresh, columns, 'insert'));
        this.keySets.remember(label, freshKeys);
      }
      await this.session.runAll(nodeRowStatements(label, changed, columns, 'update'));
    }
  }

  private async writeRelationships(groups: EdgeGroups): Promise<void> {
    for (const group of groups.values()) {
      const columns = this.schema.tables.get(group.type)!.columns;
      const pairTable = pairTableOf(group);
      const knownPairs = await this.keySets.of(pairTable);
      const candidates = knownPairs ? [...group.edges].filter(([pair]) => knownPairs.has(pair)).map(([, edge]) => edge) : [...group.edges.values()];
      const stored =
        candidates.length > 0 ? await this.storedEdges(group, [...new Set(candidates.map((edge) => edge.f))]) : new Map<string, Record<string, unknown>>();
      for (const [label, keys] of endKeysOf(group)) {
        // end nodes that do not exist yet are created with only their key (MERGE of every end costs ~10x);
        // an earlier group's are stored by now, so the lookup (or the key set) sees them
        const absent = await this.missingKeys(label, keys);
        if (absent.length === 0) continue;
        const csv =
          this.staging.enabled &&
          csvOf(
            absent,
            (key) => [key],
            () => ({}),
            label,
            [],
            new Map(),
          );
        if (csv) await this.copy(csv, (file) => `COPY ${quote(label)}(${quote(KEY_PROPERTY)}) FROM '${file}' (${CSV_OPTIONS})`);
        else await this.session.run(`COPY ${quote(label)}(${quote(KEY_PROPERTY)}) FROM (UNWIND $rows AS k RETURN k)`, { rows: absent });
        this.keySets.remember(label, absent);
      }
      const fresh: Edge[] = [];
      const freshPairs: string[] = [];
      const changed: Edge[] = [];
      for (const [pair, edge] of group.edges) {
        const before = stored.size > 0 ? stored.get(pair) : undefined;
        if (before === undefined) {
          fresh.push(edge);
          freshPairs.push(pair);
        } else if (differs(group.type, edge.props, before, columns)) changed.push(edge);
      }
      if (fresh.length > 0) {
        const names = [...columns.keys()];
        const csv =
          this.staging.enabled &&
          csvOf(
            fresh,
            (edge) => [edge.f, edge.t],
            (edge) => edge.props,
            group.type,
            names,
            columns,
          );
        if (csv) await this.copy(csv, (file) => `${relCopyTarget(group, names)} FROM '${file}' (from='${group.from}', to='${group.to}', ${CSV_OPTIONS})`);
        else await this.session.runAll(edgeRowStatements(group, fresh, columns, 'insert'));
        this.keySets.remember(pairTable, freshPairs);
      }
      await this.session.runAll(edgeRowStatements(group, changed, columns, 'update'));
    }
  }

  /** a COPY (inside the open transaction) from CSV text, through a file in the staging folder */
  private copy(csv: string, statement: (file: string) => string): Promise<void> {
    return this.staging.copy(csv, (file) => this.session.exec(statement(file)));
  }

  /** which of a label's keys are not stored: told by its key set, else looked up */
  private async missingKeys(label: string, keys: readonly string[]): Promise<string[]> {
    const known = await this.keySets.of(label);
    // a key the set holds is taken as stored: were it not, the engine would refuse the relationship
    // COPY, and the batch would be written again with its sets read afresh (see GroupCommit.drain)
    if (known) return keys.filter((key) => !known.has(key));
    const rows = await this.session.run(
      `UNWIND $keys AS k OPTIONAL MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: k}) WITH k, n WHERE n IS NULL RETURN collect(k) AS keys`,
      { keys: [...keys] },
    );
    return (rows[0]?.['keys'] ?? []) as string[];
  }

  /**
   * The stored edges among a batch's (from, to) pairs, with their properties.
   * The end pairs come first as plain keys (a struct per stored edge costs the
   * driver ~3x); properties are read only for the from-keys of pairs that exist.
   */
  private async storedEdges(group: EdgeGroup, fromKeys: readonly string[]): Promise<StoredRecords> {
    const match = `UNWIND $keys AS k MATCH (a:${quote(group.from)} {${quote(KEY_PROPERTY)}: k})-[x:${quote(group.type)}]->(b:${quote(group.to)})`;
    const pairs = await this.session.run(`${match} RETURN collect([k, b.${quote(KEY_PROPERTY)}]) AS pairs`, { keys: fromKeys });
    const present = new Set<string>();
    for (const [from, to] of (pairs[0]?.['pairs'] ?? []) as [string, string][]) {
      if (group.edges.has(pairKey({ f: from, t: to }))) present.add(from);
    }
    const stored: StoredRecords = new Map();
    if (present.size === 0) return stored;
    const existing = await this.session.run(`${match} RETURN collect({f: k, t: b.${quote(KEY_PROPERTY)}, x: x}) AS edges`, { keys: [...present] });
    for (const edge of (existing[0]?.['edges'] ?? []) as { f: string; t: string; x: Record<string, unknown> }[]) stored.set(pairKey(edge), edge.x);
    return stored;
  }
}

/** the end keys of a group, by label (one list when both ends share a label) */
function endKeysOf(group: EdgeGroup): [string, string[]][] {
  const from = new Set<string>();
  const to = group.from === group.to ? from : new Set<string>();
  for (const edge of group.edges.values()) {
    from.add(edge.f);
    to.add(edge.t);
  }
  return group.from === group.to
    ? [[group.from, [...from]]]
    : [
        [group.from, [...from]],
        [group.to, [...to]],
      ];
}

/** whether a given property differs from the stored record (both as the text the engine would store) */
function differs(table: string, given: Properties, stored: Record<string, unknown>, columns: ReadonlyMap<string, ColumnType>): boolean {
  for (const [name, value] of Object.entries(given)) {
    const type = columns.get(name);
    if (!type || name === KEY_PROPERTY) continue;
    const before = stored[name];
    const storedText = before === null || before === undefined ? null : toColumnText(typeof before === 'bigint' ? Number(before) : before, type, table, name);
    if (toColumnText(value, type, table, name) !== storedText) return true;
  }
  return false;
}
