/**
 * One Kùzu database: the graph of one organization's realm. Holding each
 * realm in its own database file makes isolation structural: any Cypher run
 * here can only see this realm's records.
 *
 * Kùzu allows one write transaction at a time and crashes the process when a
 * connection whose BEGIN failed is used again, so every operation on this
 * database (reads included: they share the one connection) runs through one
 * serial queue.
 *
 * Tables grow as records arrive: a node table per label (`_key` STRING
 * PRIMARY KEY), a relationship table per type with a FROM/TO pair per pair of
 * labels it has joined, a column per property (types: see values.ts).
 */
import kuzu from 'kuzu';
import type { Connection, Database, KuzuValue, QueryResult } from 'kuzu';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../errors.js';
import { classifyCypher } from './cypher-guard.js';
import { assertKey, assertLabel, assertProperty, isValidLabel, KEY_PROPERTY, nodeId, quote } from './names.js';
import type {
  CypherOptions, CypherResult, ExpandOptions, GraphNode, GraphNodeInput, GraphRelationship, GraphRelationshipInput,
  GraphStats, SearchOptions, SearchResult, Subgraph,
} from './store.js';
import { asText, columnTypeOf, propertiesOf, toColumnText, toJsonValue, type ColumnType } from './values.js';

export interface KuzuGraphOptions {
  /** the engine's page cache for this database */
  readonly bufferPoolBytes: number;
  /** address space reserved for the file (virtual, not resident) */
  readonly maxDbBytes: number;
  /** user Cypher is interrupted after this long */
  readonly queryTimeoutMs: number;
}

/** most rows a user Cypher query returns */
export const MAX_CYPHER_ROWS = 10_000;
const FTS_INDEX = 'fts';

interface TableSchema {
  readonly kind: 'NODE' | 'REL';
  readonly columns: Map<string, ColumnType>;
  /** REL: `From>To` label pairs */
  readonly pairs: Set<string>;
  /** NODE: the columns the full-text index covers (null: no index) */
  ftsColumns: string[] | null;
}

type Row = Record<string, KuzuValue>;
type Properties = Record<string, unknown>;

export class KuzuGraph {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly tables = new Map<string, TableSchema>();
  /** upserts waiting for the database (group commit: see enqueue) */
  private readonly writes: PendingWrite[] = [];
  private drainScheduled = false;
  /** a private folder for the CSV files COPY reads (made on first use, removed on close) */
  private staging: string | null = null;
  private staged = 0;

  private constructor(
    private readonly database: Database,
    private readonly connection: Connection,
  ) {}

  static async open(path: string, options: KuzuGraphOptions): Promise<KuzuGraph> {
    const database = new kuzu.Database(path, options.bufferPoolBytes, true, false, options.maxDbBytes);
    await database.init();
    const connection = new kuzu.Connection(database);
    await connection.init();
    connection.setQueryTimeout(options.queryTimeoutMs);
    const graph = new KuzuGraph(database, connection);
    await graph.serial(() => graph.loadSchema());
    return graph;
  }

  async close(): Promise<void> {
    await this.serial(async () => {
      await this.connection.close();
      await this.database.close();
      if (this.staging !== null) await rm(this.staging, { recursive: true, force: true });
    });
  }

  // ---- writes ------------------------------------------------------------

  /**
   * Upserts by (label, _key), all or nothing (one transaction, which other
   * batches waiting at the same time may share: see enqueue). Keys are looked
   * up first: new nodes are appended with COPY (the engine's bulk path, ~10x
   * MERGE), existing ones are updated only when a given property changed.
   */
  async upsertNodes(nodes: readonly GraphNodeInput[]): Promise<number> {
    const byLabel = new Map<string, Map<string, Properties>>();
    nodes.forEach((node, index) => {
      assertLabel(node.label, 'label', `nodes[${index}].label`);
      assertKey(node.properties?._key, `nodes[${index}].properties._key`);
      for (const name of Object.keys(node.properties)) assertProperty(name, `nodes[${index}].properties.${name}`);
      const keyed = byLabel.get(node.label) ?? new Map<string, Properties>();
      byLabel.set(node.label, keyed);
      // a key given twice in one batch: one node, later properties win
      keyed.set(node.properties._key, { ...keyed.get(node.properties._key), ...node.properties });
    });
    let count = 0;
    for (const keyed of byLabel.values()) count += keyed.size;
    return this.enqueue({ kind: 'nodes', byLabel, count });
  }

  /** the nodes of one or more merged batches, in one transaction */
  private async writeNodes(byLabel: Map<string, Map<string, Properties>>): Promise<void> {
    const statements: Statement[] = [];
    for (const [label, keyed] of byLabel) {
      const columns = await this.ensureTable(label, 'NODE', [...keyed.values()]);
      const stored = new Map<string, Record<string, unknown>>();
      // one row holding a list: the driver converts a row at a time, and 10k rows cost ~5x one list of 10k
      const found = await this.run(`UNWIND $keys AS k MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: k}) RETURN collect(n) AS nodes`, { keys: [...keyed.keys()] });
      for (const node of (found[0]?.['nodes'] ?? []) as Record<string, unknown>[]) stored.set(asText(node[KEY_PROPERTY]), node);
      const fresh = [...keyed.values()].filter((props) => !stored.has(props[KEY_PROPERTY] as string));
      const changed = [...keyed.values()].filter((props) => {
        const before = stored.get(props[KEY_PROPERTY] as string);
        return before !== undefined && differs(label, props, before, columns);
      });
      if (fresh.length >= FTS_DROP_THRESHOLD) await this.dropFtsIndex(label);
      for (const group of bySignature(fresh, columns)) {
        const names = [KEY_PROPERTY, ...group.names];
        const rows = group.rows.map((row) => encodeRow(label, row, group.names, columns, { k: row[KEY_PROPERTY] as string }));
        statements.push(copyStatement(
          `COPY ${quote(label)}(${names.map(quote).join(', ')})`,
          rows.map((row) => Object.values(row) as (string | null)[]),
          { text: `COPY ${quote(label)}(${names.map(quote).join(', ')}) FROM (UNWIND $rows AS r RETURN r.k${castList(group.names, columns)})`, rows },
        ));
      }
      for (const group of bySignature(changed, columns)) {
        const sets = group.names.map((name, at) => `n.${quote(name)} = CAST(r.p${at} AS ${columns.get(name)!})`);
        statements.push({
          text: `UNWIND $rows AS r MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: r.k}) SET ${sets.join(', ')}`,
          rows: group.rows.map((row) => encodeRow(label, row, group.names, columns, { k: row[KEY_PROPERTY] as string })),
        });
      }
    }
    await this.transaction(() => this.apply(statements));
  }

  /**
   * Upserts by (type, from, to), all or nothing (one transaction, possibly
   * shared: see enqueue): missing end nodes are created with only their key,
   * new relationships appended with COPY, existing ones updated only when a
   * given property changed.
   */
  async upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<number> {
    const groups = new Map<string, EdgeGroup>();
    relationships.forEach((rel, index) => {
      assertLabel(rel.type, 'relationship type', `relationships[${index}].type`);
      assertLabel(rel.from_label, 'label', `relationships[${index}].from_label`);
      assertLabel(rel.to_label, 'label', `relationships[${index}].to_label`);
      assertKey(rel.from_key, `relationships[${index}].from_key`);
      assertKey(rel.to_key, `relationships[${index}].to_key`);
      for (const name of Object.keys(rel.properties ?? {})) assertProperty(name, `relationships[${index}].properties.${name}`);
      const groupKey = `${rel.type}|${rel.from_label}|${rel.to_label}`;
      const group = groups.get(groupKey) ?? { type: rel.type, from: rel.from_label, to: rel.to_label, edges: new Map<string, Edge>() };
      groups.set(groupKey, group);
      const edgeKey = `${rel.from_key}\u0000${rel.to_key}`;
      const previous = group.edges.get(edgeKey);
      group.edges.set(edgeKey, { f: rel.from_key, t: rel.to_key, props: { ...previous?.props, ...rel.properties } });
    });
    let count = 0;
    for (const group of groups.values()) count += group.edges.size;
    return this.enqueue({ kind: 'relationships', groups, count });
  }

  /** the relationships of one or more merged batches, in one transaction */
  private async writeRelationships(groups: Map<string, EdgeGroup>): Promise<void> {
    const statements: Statement[] = [];
    /** end nodes this batch creates, by label */
    const creating = new Map<string, Set<string>>();
    for (const group of groups.values()) {
      await this.ensureTable(group.from, 'NODE', []);
      await this.ensureTable(group.to, 'NODE', []);
      const edges = [...group.edges.values()];
      const columns = await this.ensureTable(group.type, 'REL', edges.map((edge) => edge.props), `${group.from}>${group.to}`);
      const fromKeys = [...new Set(edges.map((edge) => edge.f))];
      const toKeys = [...new Set(edges.map((edge) => edge.t))];
      const stored = await this.storedEdges(group, fromKeys);
      // end nodes that do not exist yet are created with only their key (looked up first: MERGE of every end costs ~10x)
      const ends = group.from === group.to ? [[group.from, [...new Set([...fromKeys, ...toKeys])]] as const] : [[group.from, fromKeys] as const, [group.to, toKeys] as const];
      for (const [label, keys] of ends) {
        const missing = await this.run(
          `UNWIND $keys AS k OPTIONAL MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: k}) WITH k, n WHERE n IS NULL RETURN collect(k) AS keys`,
          { keys: [...keys] },
        );
        // another group of this batch may already create the same end node
        const planned = creating.get(label) ?? new Set<string>();
        creating.set(label, planned);
        const absent = ((missing[0]?.['keys'] ?? []) as string[]).filter((key) => !planned.has(key));
        for (const key of absent) planned.add(key);
        if (absent.length > 0) {
          statements.push(copyStatement(
            `COPY ${quote(label)}(${quote(KEY_PROPERTY)})`,
            absent.map((key) => [key]),
            { text: `COPY ${quote(label)}(${quote(KEY_PROPERTY)}) FROM (UNWIND $rows AS k RETURN k)`, rows: absent },
          ));
        }
      }
      const withEdge = (edge: Edge) => ({ ...edge.props, [EDGE]: edge });
      const fresh = edges.filter((edge) => !stored.has(`${edge.f}\u0000${edge.t}`)).map(withEdge);
      const changed = edges
        .filter((edge) => {
          const before = stored.get(`${edge.f}\u0000${edge.t}`);
          return before !== undefined && differs(group.type, edge.props, before, columns);
        })
        .map(withEdge);
      const ends2 = (row: Record<string | symbol, unknown>): Row => {
        const edge = row[EDGE] as Edge;
        return { f: edge.f, t: edge.t };
      };
      for (const part of bySignature(fresh, columns)) {
        // every property column is listed (absent ones as NULL): a rel COPY without a column list wants them all
        const names = [...columns.keys()];
        const given = new Set(part.names);
        const values = names.map((name) => (given.has(name) ? `CAST(r.p${part.names.indexOf(name)} AS ${columns.get(name)!})` : `CAST(NULL AS ${columns.get(name)!})`));
        const rows = part.rows.map((row) => encodeRow(group.type, row, part.names, columns, ends2(row)));
        const target = `COPY ${quote(group.type)}${names.length ? `(${names.map(quote).join(', ')})` : ''}`;
        const endTables = `from='${group.from}', to='${group.to}'`;
        statements.push(copyStatement(
          target,
          rows.map((row) => [row['f'] as string, row['t'] as string, ...names.map((name) => (given.has(name) ? (row[`p${part.names.indexOf(name)}`] as string | null) : null))]),
          { text: `${target} FROM (UNWIND $rows AS r RETURN r.f, r.t${values.map((value) => `, ${value}`).join('')}) (${endTables})`, rows },
          endTables,
        ));
      }
      for (const part of bySignature(changed, columns)) {
        const sets = part.names.map((name, at) => `x.${quote(name)} = CAST(r.p${at} AS ${columns.get(name)!})`);
        statements.push({
          text:
            `UNWIND $rows AS r MATCH (a:${quote(group.from)} {${quote(KEY_PROPERTY)}: r.f})-[x:${quote(group.type)}]->(b:${quote(group.to)}) ` +
            `WHERE b.${quote(KEY_PROPERTY)} = r.t SET ${sets.join(', ')}`,
          rows: part.rows.map((row) => encodeRow(group.type, row, part.names, columns, ends2(row))),
        });
      }
    }
    await this.transaction(() => this.apply(statements));
  }

  /**
   * Group commit: upserts that arrive while the database is busy wait here,
   * and the next turn writes every waiting batch of the same kind (in arrival
   * order, up to MAX_MERGED_ROWS) in one transaction: a commit costs ~50 ms
   * whatever its size, so concurrent writers share it. Each caller still gets
   * all-or-nothing for its own batch: when a merged transaction fails, its
   * batches are written again one by one, each in its own transaction.
   */
  private enqueue(write: WriteBatch): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.writes.push({ ...write, resolve, reject });
      if (!this.drainScheduled) {
        this.drainScheduled = true;
        void this.serial(() => this.drain());
      }
    });
  }

  /** writes the next run of same-kind batches, then yields the queue to waiting reads before the next */
  private async drain(): Promise<void> {
    const first = this.writes[0];
    if (!first) {
      this.drainScheduled = false;
      return;
    }
    const taken: PendingWrite[] = [];
    let rows = 0;
    for (let next = this.writes[0]; next && next.kind === first.kind && (taken.length === 0 || rows + next.count <= MAX_MERGED_ROWS); next = this.writes[0]) {
      taken.push(next);
      rows += next.count;
      this.writes.shift();
    }
    try {
      await this.writeMerged(taken);
      for (const write of taken) write.resolve(write.count);
    } catch (error) {
      if (taken.length === 1) taken[0]?.reject(error);
      else {
        for (const write of taken) await this.writeMerged([write]).then(() => write.resolve(write.count), write.reject);
      }
    }
    if (this.writes.length > 0) void this.serial(() => this.drain());
    else this.drainScheduled = false;
  }

  private writeMerged(writes: readonly WriteBatch[]): Promise<void> {
    const nodes = writes.flatMap((write) => (write.kind === 'nodes' ? [write.byLabel] : []));
    if (nodes.length > 0) {
      if (nodes.length === 1) return this.writeNodes(nodes[0]!);
      const byLabel = new Map<string, Map<string, Properties>>();
      for (const batch of nodes) {
        for (const [label, keyed] of batch) {
          const merged = byLabel.get(label) ?? new Map<string, Properties>();
          byLabel.set(label, merged);
          // a key in several batches: later batches' properties win, as within one batch
          for (const [key, props] of keyed) merged.set(key, { ...merged.get(key), ...props });
        }
      }
      return this.writeNodes(byLabel);
    }
    const relationships = writes.flatMap((write) => (write.kind === 'relationships' ? [write.groups] : []));
    if (relationships.length === 1) return this.writeRelationships(relationships[0]!);
    const groups = new Map<string, EdgeGroup>();
    for (const batch of relationships) {
      for (const [groupKey, group] of batch) {
        const merged = groups.get(groupKey) ?? { type: group.type, from: group.from, to: group.to, edges: new Map<string, Edge>() };
        groups.set(groupKey, merged);
        for (const [edgeKey, edge] of group.edges) {
          const previous = merged.edges.get(edgeKey);
          merged.edges.set(edgeKey, { f: edge.f, t: edge.t, props: { ...previous?.props, ...edge.props } });
        }
      }
    }
    return this.writeRelationships(groups);
  }

  /**
   * The stored edges among a batch's (from, to) pairs, with their properties.
   * The end pairs come first as plain keys (a struct per stored edge costs the
   * driver ~3x); properties are read only for the from-keys of pairs that exist.
   */
  private async storedEdges(group: EdgeGroup, fromKeys: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const match = `UNWIND $keys AS k MATCH (a:${quote(group.from)} {${quote(KEY_PROPERTY)}: k})-[x:${quote(group.type)}]->(b:${quote(group.to)})`;
    const pairs = await this.run(`${match} RETURN collect([k, b.${quote(KEY_PROPERTY)}]) AS pairs`, { keys: fromKeys });
    const present = new Set<string>();
    for (const [from, to] of (pairs[0]?.['pairs'] ?? []) as [string, string][]) {
      const edgeKey = `${from}\u0000${to}`;
      if (group.edges.has(edgeKey)) present.add(from);
    }
    const stored = new Map<string, Record<string, unknown>>();
    if (present.size === 0) return stored;
    const existing = await this.run(`${match} RETURN collect({f: k, t: b.${quote(KEY_PROPERTY)}, x: x}) AS edges`, { keys: [...present] });
    for (const edge of (existing[0]?.['edges'] ?? []) as { f: string; t: string; x: Record<string, unknown> }[]) stored.set(`${edge.f}\u0000${edge.t}`, edge.x);
    return stored;
  }

  async deleteNode(label: string, key: string): Promise<{ relationshipsDeleted: number } | null> {
    return this.serial(async () => {
      if (this.tables.get(label)?.kind !== 'NODE') return null;
      const match = `MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key})`;
      const found = await this.run(`${match} RETURN count(n) AS c`, { key });
      if (Number(found[0]?.['c'] ?? 0) === 0) return null;
      const hasRels = [...this.tables.values()].some((table) => table.kind === 'REL');
      const relationshipsDeleted = hasRels
        ? Number((await this.run(`${match}-[r]-() RETURN count(DISTINCT ID(r)) AS c`, { key }))[0]?.['c'] ?? 0)
        : 0;
      await this.transaction(async () => {
        await this.run(`${match} ${hasRels ? 'DETACH ' : ''}DELETE n`, { key });
      });
      return { relationshipsDeleted };
    });
  }

  // ---- reads -------------------------------------------------------------

  async getNode(label: string, key: string): Promise<GraphNode | null> {
    return this.serial(async () => {
      if (this.tables.get(label)?.kind !== 'NODE') return null;
      const rows = await this.run(`MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key}) RETURN n`, { key });
      return rows[0] ? toNode(rows[0]['n']) : null;
    });
  }

  async search(options: SearchOptions): Promise<SearchResult> {
    return this.serial(async () => {
      const labels = [...this.tables.entries()]
        .filter(([name, table]) => table.kind === 'NODE' && (!options.labels || options.labels.includes(name)))
        .map(([name]) => name);
      const items: SearchResult['items'] = [];
      let total = 0;
      for (const label of labels) {
        await this.ensureFtsIndex(label);
        const call = `CALL QUERY_FTS_INDEX('${label}', '${FTS_INDEX}', $query)`;
        const counted = await this.run(`${call} RETURN count(*) AS c`, { query: options.query });
        const matches = Number(counted[0]?.['c'] ?? 0);
        if (matches === 0) continue;
        total += matches;
        // `top` lets the index stop scoring early (about 2x faster than ORDER BY ... LIMIT alone)
        const ranked = `CALL QUERY_FTS_INDEX('${label}', '${FTS_INDEX}', $query, top := ${Math.trunc(options.limit)})`;
        const rows = await this.run(`${ranked} RETURN node, score ORDER BY score DESC LIMIT ${Math.trunc(options.limit)}`, { query: options.query });
        for (const row of rows) items.push({ ...toNode(row['node']), score: Number(row['score']) });
      }
      items.sort((left, right) => right.score - left.score);
      return { items: items.slice(0, options.limit), total };
    });
  }

  async expand(label: string, key: string, options: ExpandOptions): Promise<Subgraph | null> {
    return this.serial(async () => {
      if (this.tables.get(label)?.kind !== 'NODE') return null;
      const start = await this.run(`MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key}) RETURN n`, { key });
      if (!start[0]) return null;
      const nodes = new Map<string, GraphNode>();
      const first = toNode(start[0]['n']);
      nodes.set(first.id, first);
      const relationships = new Map<string, GraphRelationship>();
      const relTypes = [...this.tables.entries()]
        .filter(([name, table]) => table.kind === 'REL' && (!options.types || options.types.includes(name)))
        .map(([name]) => quote(name));
      if (relTypes.length === 0) return { nodes: [...nodes.values()], relationships: [] };
      const typeFilter = options.types ? `:${relTypes.join('|')}` : '';
      const directions = options.direction === 'both' ? (['out', 'in'] as const) : [options.direction];
      let frontier = new Map<string, Set<string>>([[label, new Set([key])]]);
      for (let level = 0; level < options.depth && frontier.size > 0; level += 1) {
        const next = new Map<string, Set<string>>();
        for (const [fromLabel, keys] of frontier) {
          for (const direction of directions) {
            const pattern = direction === 'out' ? `-[r${typeFilter}]->` : `<-[r${typeFilter}]-`;
            const rows = await this.run(
              `UNWIND $keys AS k MATCH (a:${quote(fromLabel)} {${quote(KEY_PROPERTY)}: k})${pattern}(b) RETURN a.${quote(KEY_PROPERTY)} AS ak, r, b LIMIT ${MAX_CYPHER_ROWS}`,
              { keys: [...keys] },
            );
            for (const row of rows) {
              const near = toNode(row['b']);
              if (!nodes.has(near.id)) {
                if (nodes.size >= options.limit) continue;
                nodes.set(near.id, near);
                const pending = next.get(near.label) ?? new Set<string>();
                next.set(near.label, pending.add(near.key));
              }
              const rel = row['r'] as Record<string, unknown>;
              const here = nodeId(fromLabel, asText(row['ak']));
              const id = internalId(rel['_id']);
              if (!relationships.has(id)) {
                relationships.set(id, {
                  type: String(rel['_label']),
                  from: direction === 'out' ? here : near.id,
                  to: direction === 'out' ? near.id : here,
                  properties: propertiesOf(rel),
                });
              }
            }
          }
        }
        frontier = next;
      }
      return { nodes: [...nodes.values()], relationships: [...relationships.values()] };
    });
  }

  async stats(perLabel: boolean): Promise<GraphStats> {
    return this.serial(async () => {
      const labels: Record<string, number> = {};
      const types: Record<string, number> = {};
      let nodeCount = 0;
      let relCount = 0;
      for (const [name, table] of this.tables) {
        const rows = table.kind === 'NODE'
          ? await this.run(`MATCH (n:${quote(name)}) RETURN count(n) AS c`)
          : await this.run(`MATCH ()-[r:${quote(name)}]->() RETURN count(r) AS c`);
        const count = Number(rows[0]?.['c'] ?? 0);
        if (table.kind === 'NODE') {
          nodeCount += count;
          labels[name] = count;
        } else {
          relCount += count;
          types[name] = count;
        }
      }
      return perLabel
        ? { node_count: nodeCount, relationship_count: relCount, labels, relationship_types: types }
        : { node_count: nodeCount, relationship_count: relCount };
    });
  }

  async cypher(query: string, params: Record<string, unknown>, options: CypherOptions): Promise<CypherResult> {
    const kind = classifyCypher(query);
    if (kind === 'write' && !options.allowWrite) {
      throw new ServiceError('forbidden', 'this Cypher query writes to the graph: it needs the graph:write permission', { permission: 'graph:write' });
    }
    return this.serial(async () => {
      // engine-side guard: a read runs in a READ ONLY transaction, whatever the clause scan concluded
      await this.exec(kind === 'read' ? 'BEGIN TRANSACTION READ ONLY' : 'BEGIN TRANSACTION');
      let result: QueryResult | null = null;
      try {
        const prepared = await this.connection.prepare(query);
        if (!prepared.isSuccess()) throw cypherError(prepared.getErrorMessage(), true);
        try {
          result = single(await this.connection.execute(prepared, params as Record<string, KuzuValue>));
        } catch (error) {
          throw cypherError(error instanceof Error ? error.message : String(error), false);
        }
        const columns = await result.getColumnNames();
        const rows: Record<string, unknown>[] = [];
        while (rows.length < MAX_CYPHER_ROWS && result.hasNext()) {
          const row = await result.getNext();
          if (!row) break;
          rows.push(Object.fromEntries(columns.map((column) => [column, toJsonValue(row[column])])));
        }
        await this.exec('COMMIT');
        return { columns, rows };
      } catch (error) {
        await this.exec('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        result?.close();
      }
    });
  }

  // ---- schema ------------------------------------------------------------

  private async loadSchema(): Promise<void> {
    this.tables.clear();
    for (const row of await this.run('CALL show_tables() RETURN name, type')) {
      const name = asText(row['name']);
      const kind = row['type'] === 'REL' ? 'REL' : row['type'] === 'NODE' ? 'NODE' : null;
      // the full-text index keeps its own tables (names starting with a digit or `_`)
      if (!kind || !isValidLabel(name)) continue;
      const columns = new Map<string, ColumnType>();
      for (const column of await this.run(`CALL table_info('${name}') RETURN name, type`)) {
        columns.set(asText(column['name']), asText(column['type']) as ColumnType);
      }
      const pairs = new Set<string>();
      if (kind === 'REL') {
        for (const pair of await this.run(`CALL show_connection('${name}') RETURN *`)) {
          pairs.add(`${asText(pair['source table name'])}>${asText(pair['destination table name'])}`);
        }
      }
      this.tables.set(name, { kind, columns, pairs, ftsColumns: null });
    }
    for (const index of await this.run('CALL show_indexes() RETURN table_name, index_name, property_names')) {
      const table = this.tables.get(asText(index['table_name']));
      if (table && index['index_name'] === FTS_INDEX) table.ftsColumns = (index['property_names'] as string[]).map(String);
    }
  }

  /** creates the table, its FROM/TO pair and the columns the rows bring; returns the columns */
  private async ensureTable(name: string, kind: 'NODE' | 'REL', rows: readonly Properties[], pair?: string): Promise<Map<string, ColumnType>> {
    const existing = this.tables.get(name);
    if (existing && existing.kind !== kind) {
      throw new ServiceError('validation_error', `"${name}" is already a ${existing.kind === 'NODE' ? 'node label' : 'relationship type'} in this realm; labels and relationship types need distinct names`, { name });
    }
    const columns = new Map<string, ColumnType>(existing?.columns ?? (kind === 'NODE' ? [[KEY_PROPERTY, 'STRING']] : []));
    const added: [string, ColumnType][] = [];
    for (const row of rows) {
      for (const [property, value] of Object.entries(row)) {
        if (columns.has(property)) continue;
        const type = columnTypeOf(value);
        if (type === null) continue;
        columns.set(property, type);
        added.push([property, type]);
      }
    }
    // every value must fit its column before anything is created
    for (const row of rows) {
      for (const [property, value] of Object.entries(row)) {
        const type = columns.get(property);
        if (type) toColumnText(value, type, { table: name, property });
      }
    }
    const [from, to] = (pair ?? '>').split('>') as [string, string];
    if (!existing) {
      const definitions = added.map(([property, type]) => `${quote(property)} ${type}`);
      const head = kind === 'NODE' ? [`${quote(KEY_PROPERTY)} STRING PRIMARY KEY`] : [`FROM ${quote(from)} TO ${quote(to)}`];
      await this.exec(`CREATE ${kind} TABLE ${quote(name)}(${[...head, ...definitions].join(', ')})`);
      this.tables.set(name, { kind, columns, pairs: new Set(pair ? [pair] : []), ftsColumns: null });
      return columns;
    }
    if (pair && !existing.pairs.has(pair)) {
      await this.exec(`ALTER TABLE ${quote(name)} ADD FROM ${quote(from)} TO ${quote(to)}`);
      existing.pairs.add(pair);
    }
    for (const [property, type] of added) {
      await this.exec(`ALTER TABLE ${quote(name)} ADD ${quote(property)} ${type}`);
      existing.columns.set(property, type);
    }
    return existing.columns;
  }

  /** (re)builds a label's full-text index when its string columns changed since it was built */
  private async ensureFtsIndex(label: string): Promise<void> {
    const table = this.tables.get(label)!;
    const wanted = [...table.columns].filter(([, type]) => type === 'STRING').map(([name]) => name).sort();
    if (table.ftsColumns && sameList(table.ftsColumns, wanted)) return;
    await this.dropFtsIndex(label);
    await this.exec(`CALL CREATE_FTS_INDEX('${label}', '${FTS_INDEX}', [${wanted.map((column) => `'${column}'`).join(', ')}])`);
    table.ftsColumns = wanted;
  }

  private async dropFtsIndex(label: string): Promise<void> {
    const table = this.tables.get(label);
    if (!table?.ftsColumns) return;
    await this.exec(`CALL DROP_FTS_INDEX('${label}', '${FTS_INDEX}')`);
    table.ftsColumns = null;
  }

  // ---- engine access -----------------------------------------------------

  /** runs a batch's statements in order (inside its transaction); CSV ones through a staging file */
  private async apply(statements: readonly Statement[]): Promise<void> {
    for (const statement of statements) {
      if ('text' in statement) {
        await this.run(statement.text, { rows: statement.rows });
        continue;
      }
      this.staging ??= await mkdtemp(join(tmpdir(), 'graph-copy-'));
      const file = join(this.staging, `${(this.staged += 1)}.csv`);
      // the path is quoted into the COPY text: a TMPDIR with a quote or backslash in it takes the parameter path
      if (/['\\]/.test(file)) {
        await this.run(statement.fallback.text, { rows: statement.fallback.rows });
        continue;
      }
      await writeFile(file, statement.csv);
      try {
        await this.exec(statement.copy(file));
      } finally {
        await rm(file, { force: true });
      }
    }
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }

  private async transaction(work: () => Promise<void>): Promise<void> {
    await this.exec('BEGIN TRANSACTION');
    try {
      await work();
      await this.exec('COMMIT');
    } catch (error) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** a statement without parameters (DDL, transaction control, index procedures) */
  private async exec(statement: string): Promise<void> {
    single(await this.connection.query(statement)).close();
  }

  private async run(statement: string, params: Record<string, unknown> = {}): Promise<Row[]> {
    const prepared = await this.connection.prepare(statement);
    if (!prepared.isSuccess()) throw new Error(`graph statement failed to prepare: ${prepared.getErrorMessage()}`);
    const result = single(await this.connection.execute(prepared, params as Record<string, KuzuValue>));
    try {
      return await result.getAll();
    } finally {
      result.close();
    }
  }
}

const EDGE = Symbol('edge');
/** most rows one merged write transaction takes (a single batch of any size still goes alone) */
const MAX_MERGED_ROWS = 50_000;

/** one caller's upsert batch, prepared; `count`: its distinct records (what the caller is answered) */
type WriteBatch =
  | { readonly kind: 'nodes'; readonly byLabel: Map<string, Map<string, Properties>>; readonly count: number }
  | { readonly kind: 'relationships'; readonly groups: Map<string, EdgeGroup>; readonly count: number };
type PendingWrite = WriteBatch & { readonly resolve: (count: number) => void; readonly reject: (error: unknown) => void };
/** a COPY of this many new nodes drops the label's full-text index; the next search rebuilds it once instead of updating it per row */
const FTS_DROP_THRESHOLD = 1000;

/**
 * A statement of a write batch: Cypher with the rows as a list parameter, or
 * a COPY from CSV text (the engine's bulk path: the driver converts a list
 * parameter a value at a time, ~3x slower for 10k rows).
 */
type Statement =
  | { readonly text: string; readonly rows: unknown[] }
  | { readonly copy: (file: string) => string; readonly csv: string; readonly fallback: { readonly text: string; readonly rows: unknown[] } };

/**
 * How a CSV row marks NULL (COPY's NULL_STRINGS; an empty field must stay an
 * empty string). `NULL` because the engine's BOOLEAN reader takes no other
 * null text. The match is exact (`null`, ` NULL ` stay strings); a batch
 * holding exactly `NULL` as a value is sent as a list parameter instead, so
 * no value is ever mistaken for NULL.
 */
const CSV_NULL = 'NULL';

/** `target` (`COPY Table(columns)`) fed from CSV rows, or the list-parameter `fallback` when a value is CSV_NULL */
function copyStatement(target: string, rows: readonly (readonly (string | null)[])[], fallback: { text: string; rows: unknown[] }, options = ''): Statement {
  let csv = '';
  for (const row of rows) {
    let line = '';
    for (let at = 0; at < row.length; at += 1) {
      const value = row[at];
      if (value === CSV_NULL) return fallback;
      line += (at === 0 ? '' : ',') + (value === null || value === undefined ? CSV_NULL : `"${value.replaceAll('"', '""')}"`);
    }
    csv += line + '\n';
  }
  const settings = `${options ? `${options}, ` : ''}header=false, parallel=false, null_strings=['${CSV_NULL}']`;
  return { copy: (file) => `${target} FROM '${file}' (${settings})`, csv, fallback };
}
interface Edge {
  readonly f: string;
  readonly t: string;
  readonly props: Properties;
}
interface EdgeGroup {
  readonly type: string;
  readonly from: string;
  readonly to: string;
  readonly edges: Map<string, Edge>;
}

/** `, CAST(r.p0 AS T0), ...` for the properties of a signature group */
function castList(names: readonly string[], columns: Map<string, ColumnType>): string {
  return names.map((name, at) => `, CAST(r.p${at} AS ${columns.get(name)!})`).join('');
}

/** whether a given property differs from the stored record (both as the text the engine would store) */
function differs(table: string, given: Properties, stored: Record<string, unknown>, columns: Map<string, ColumnType>): boolean {
  for (const [name, value] of Object.entries(given)) {
    const type = columns.get(name);
    if (!type || name === KEY_PROPERTY) continue;
    const before = stored[name];
    const storedText = before === null || before === undefined ? null : toColumnText(typeof before === 'bigint' ? Number(before) : before, type, { table, property: name });
    if (toColumnText(value, type, { table, property: name }) !== storedText) return true;
  }
  return false;
}

function single(result: QueryResult | QueryResult[]): QueryResult {
  if (Array.isArray(result)) {
    for (const extra of result.slice(1)) extra.close();
    return result[0]!;
  }
  return result;
}

/** rows grouped by the properties they set (a property a row does not give keeps its stored value) */
function bySignature(rows: readonly Record<string | symbol, unknown>[], columns: Map<string, ColumnType>): { names: string[]; rows: Record<string | symbol, unknown>[] }[] {
  const groups = new Map<string, { names: string[]; rows: Record<string | symbol, unknown>[] }>();
  for (const row of rows) {
    const names = Object.keys(row).filter((name) => name !== KEY_PROPERTY && columns.has(name)).sort();
    const signature = names.join(',');
    const group = groups.get(signature) ?? { names, rows: [] };
    groups.set(signature, group);
    group.rows.push(row);
  }
  return [...groups.values()];
}

function encodeRow(table: string, row: Record<string | symbol, unknown>, names: readonly string[], columns: Map<string, ColumnType>, base: Row): Row {
  const encoded: Row = { ...base };
  names.forEach((name, at) => {
    encoded[`p${at}`] = toColumnText(row[name], columns.get(name)!, { table, property: name });
  });
  return encoded;
}

function toNode(value: unknown): GraphNode {
  const record = value as Record<string, unknown>;
  const label = String(record['_label']);
  const key = String(record[KEY_PROPERTY]);
  return { id: nodeId(label, key), label, key, properties: propertiesOf(record) };
}

function internalId(value: unknown): string {
  const id = value as { table: number; offset: number };
  return `${id.table}:${id.offset}`;
}

function sameList(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && [...left].sort().every((item, index) => item === right[index]);
}

function cypherError(message: string, atPrepare: boolean): ServiceError {
  if (/read-only transaction/i.test(message)) {
    return new ServiceError('forbidden', 'this Cypher query writes to the graph: it needs the graph:write permission', { permission: 'graph:write' });
  }
  if (atPrepare || /^(Parser|Binder|Catalog) exception/i.test(message)) return new ServiceError('cypher_syntax_error', message);
  return new ServiceError('validation_error', `the Cypher query failed: ${message}`);
}
