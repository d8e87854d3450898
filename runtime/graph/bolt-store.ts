/**
 * The graph on a shared Memgraph/Neo4j server over Bolt (GRAPH_URL).
 *
 * Every node and relationship carries `_org` and `_realm` properties and
 * every statement this store writes matches on them, so the store's own
 * operations stay inside one scope. Raw user Cypher cannot be confined that
 * way on a shared server (a query may simply omit the filter), so this store
 * refuses it (403) instead of running it: use the embedded store, whose one
 * database per realm isolates by construction, for `/graph/cypher`.
 *
 * Search has no portable full-text index across Memgraph and Neo4j: it
 * matches terms as case-insensitive substrings of string properties and ranks
 * by how many terms a node matches.
 */
import neo4j, { type Driver, type Node, type Relationship } from 'neo4j-driver';
import type { GraphSink } from '../../connectors/contract.js';
import { ServiceError } from '../errors.js';
import { groupNodes, groupRelationships } from './batches.js';
import { assertLabel, KEY_PROPERTY, nodeId, quote } from './names.js';
import { scopedSink, type GraphNode, type GraphRelationship, type GraphScope, type GraphStore, type IndexRebuild, type Subgraph } from './store.js';

const SCOPE_PROPERTIES = new Set(['_org', '_realm']);
const MAX_SEARCH_CANDIDATES = 5000;

export class BoltGraphStore implements GraphStore {
  readonly engine = 'bolt';

  private constructor(private readonly driver: Driver) {}

  static async connect(url: string): Promise<BoltGraphStore> {
    const parsed = new URL(url);
    const auth = parsed.username ? neo4j.auth.basic(decodeURIComponent(parsed.username), decodeURIComponent(parsed.password)) : undefined;
    parsed.username = '';
    parsed.password = '';
    const driver = neo4j.driver(parsed.toString(), auth);
    await driver.getServerInfo();
    return new BoltGraphStore(driver);
  }

  async upsertNodes(scope: GraphScope, nodes: Parameters<GraphStore['upsertNodes']>[1]): Promise<number> {
    const { byLabel, count } = groupNodes(nodes, SCOPE_PROPERTIES);
    await this.write(async (run) => {
      for (const [label, keyed] of byLabel) {
        const rows = [...keyed.values()].map((props) => ({ k: props[KEY_PROPERTY], props: encode(props) }));
        await run(`UNWIND $rows AS r MERGE (n:${quote(label)} {_org: $org, _realm: $realm, _key: r.k}) SET n += r.props`, { ...scopeParams(scope), rows });
      }
    });
    return count;
  }

  async upsertRelationships(scope: GraphScope, relationships: Parameters<GraphStore['upsertRelationships']>[1]): Promise<number> {
    const { groups, count } = groupRelationships(relationships, SCOPE_PROPERTIES);
    await this.write(async (run) => {
      for (const group of groups.values()) {
        const rows = [...group.edges.values()].map((edge) => ({ f: edge.f, t: edge.t, props: encode(edge.props) }));
        await run(
          `UNWIND $rows AS r MERGE (a:${quote(group.from)} {_org: $org, _realm: $realm, _key: r.f}) ` +
            `MERGE (b:${quote(group.to)} {_org: $org, _realm: $realm, _key: r.t}) ` +
            `MERGE (a)-[x:${quote(group.type)} {_org: $org, _realm: $realm}]->(b) SET x += r.props`,
          { ...scopeParams(scope), rows },
        );
      }
    });
    return count;
  }

  async getNode(scope: GraphScope, label: string, key: string): Promise<GraphNode | null> {
    assertLabel(label, 'label', 'id');
    const records = await this.read(`MATCH (n:${quote(label)} {_org: $org, _realm: $realm, _key: $key}) RETURN n`, { ...scopeParams(scope), key });
    return records[0] ? toNode(records[0]['n'] as Node) : null;
  }

  async deleteNode(scope: GraphScope, label: string, key: string): Promise<{ relationshipsDeleted: number } | null> {
    assertLabel(label, 'label', 'id');
    let result: { relationshipsDeleted: number } | null = null;
    await this.write(async (run) => {
      const match = `MATCH (n:${quote(label)} {_org: $org, _realm: $realm, _key: $key})`;
      const rows = await run(`${match} OPTIONAL MATCH (n)-[r]-() RETURN count(DISTINCT r) AS c, count(n) AS n`, { ...scopeParams(scope), key });
      if (!rows[0] || toJs(rows[0]['n']) === 0) return;
      result = { relationshipsDeleted: Number(toJs(rows[0]['c'])) };
      await run(`${match} DETACH DELETE n`, { ...scopeParams(scope), key });
    });
    return result;
  }

  async search(scope: GraphScope, options: Parameters<GraphStore['search']>[1]): Promise<Awaited<ReturnType<GraphStore['search']>>> {
    const terms = options.query
      .toLowerCase()
      .split(/\s+/)
      .filter((term) => term.length > 0);
    const labels = options.labels ? [...options.labels] : null;
    const records = await this.read(
      'MATCH (n) WHERE n._org = $org AND n._realm = $realm AND ($labels IS NULL OR any(l IN labels(n) WHERE l IN $labels)) ' +
        "AND any(t IN $terms WHERE any(k IN keys(n) WHERE NOT k IN ['_org', '_realm'] AND toLower(toString(n[k])) CONTAINS t)) " +
        `RETURN n LIMIT ${MAX_SEARCH_CANDIDATES}`,
      { ...scopeParams(scope), labels, terms },
    );
    const scored = records.map((record) => {
      const node = toNode(record['n'] as Node);
      const text = Object.values(node.properties)
        .filter((value) => typeof value === 'string')
        .join(' ')
        .toLowerCase();
      const score = terms.reduce((sum, term) => sum + (text.split(term).length - 1), 0);
      return { ...node, score };
    });
    scored.sort((left, right) => right.score - left.score);
    return { items: scored.slice(0, options.limit), total: scored.length };
  }

  async expand(scope: GraphScope, label: string, key: string, options: Parameters<GraphStore['expand']>[3]): Promise<Subgraph | null> {
    const start = await this.getNode(scope, label, key);
    if (!start) return null;
    const nodes = new Map<string, GraphNode>([[start.id, start]]);
    const relationships = new Map<string, GraphRelationship>();
    const directions = options.direction === 'both' ? (['out', 'in'] as const) : [options.direction];
    let frontier = new Map<string, Set<string>>([[label, new Set([key])]]);
    for (let level = 0; level < options.depth && frontier.size > 0; level += 1) {
      const next = new Map<string, Set<string>>();
      for (const [fromLabel, keys] of frontier) {
        for (const direction of directions) {
          const pattern = direction === 'out' ? '-[r]->' : '<-[r]-';
          const records = await this.read(
            `UNWIND $keys AS k MATCH (a:${quote(fromLabel)} {_org: $org, _realm: $realm, _key: k})${pattern}(b) ` +
              'WHERE b._org = $org AND b._realm = $realm AND ($types IS NULL OR type(r) IN $types) RETURN a._key AS ak, r, b',
            { ...scopeParams(scope), keys: [...keys], types: options.types ? [...options.types] : null },
          );
          for (const record of records) {
            const near = toNode(record['b'] as Node);
            if (!nodes.has(near.id)) {
              if (nodes.size >= options.limit) continue;
              nodes.set(near.id, near);
              next.set(near.label, (next.get(near.label) ?? new Set<string>()).add(near.key));
            }
            const rel = record['r'] as Relationship;
            const here = nodeId(fromLabel, String(record['ak']));
            relationships.set(rel.identity.toString(), {
              type: rel.type,
              from: direction === 'out' ? here : near.id,
              to: direction === 'out' ? near.id : here,
              properties: userProperties(rel.properties),
            });
          }
        }
      }
      frontier = next;
    }
    return { nodes: [...nodes.values()], relationships: [...relationships.values()] };
  }

  cypher(): Promise<never> {
    return Promise.reject(
      new ServiceError(
        'forbidden',
        'raw Cypher is not available on a shared Bolt graph server (GRAPH_URL): it could read other realms; use search, get and expand',
        {
          engine: 'bolt',
        },
      ),
    );
  }

  async stats(scope: GraphScope, perLabel: boolean): Promise<Awaited<ReturnType<GraphStore['stats']>>> {
    const nodeRows = await this.read('MATCH (n) WHERE n._org = $org AND n._realm = $realm RETURN labels(n)[0] AS name, count(*) AS c', scopeParams(scope));
    const relRows = await this.read('MATCH ()-[r]->() WHERE r._org = $org AND r._realm = $realm RETURN type(r) AS name, count(*) AS c', scopeParams(scope));
    const tally = (rows: Record<string, unknown>[]) => Object.fromEntries(rows.map((row) => [String(row['name']), Number(toJs(row['c']))]));
    const labels = tally(nodeRows);
    const types = tally(relRows);
    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
    return perLabel
      ? { node_count: sum(labels), relationship_count: sum(types), labels, relationship_types: types }
      : { node_count: sum(labels), relationship_count: sum(types) };
  }

  /** bulk import reads spooled CSV with the embedded engine's COPY: not offered over Bolt */
  async import(): Promise<never> {
    throw new ServiceError(
      'service_unavailable',
      'bulk import needs the embedded graph engine; with GRAPH_URL set, load through /graph/nodes and /graph/relationships',
    );
  }

  sinkFor(orgId: string, realm: string): GraphSink {
    return scopedSink(this, { orgId, realm });
  }

  /** the shared server's indexes are the server's (search scans, see above): nothing of a realm's to rebuild */
  rebuildIndexes(): Promise<IndexRebuild> {
    return Promise.resolve({ labels: [] });
  }

  async ping(): Promise<void> {
    await this.driver.getServerInfo();
  }

  async close(): Promise<void> {
    await this.driver.close();
  }

  private async read(query: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const session = this.driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      const result = await session.executeRead((tx) => tx.run(query, params));
      return result.records.map((record) => record.toObject() as Record<string, unknown>);
    } finally {
      await session.close();
    }
  }

  /** one transaction for the whole batch */
  private async write(work: (run: (query: string, params: Record<string, unknown>) => Promise<Record<string, unknown>[]>) => Promise<void>): Promise<void> {
    const session = this.driver.session({ defaultAccessMode: neo4j.session.WRITE });
    try {
      await session.executeWrite(async (tx) => {
        await work(async (query, params) => (await tx.run(query, params)).records.map((record) => record.toObject() as Record<string, unknown>));
      });
    } finally {
      await session.close();
    }
  }
}

function scopeParams(scope: GraphScope): { org: string; realm: string } {
  return { org: scope.orgId, realm: scope.realm };
}

/** integers as Bolt integers (the driver sends JS numbers as floats), maps as JSON text */
function encode(props: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) out[name] = neo4j.int(value);
    else if (value !== null && typeof value === 'object') out[name] = JSON.stringify(value);
    else out[name] = value ?? null;
  }
  return out;
}

function toJs(value: unknown): unknown {
  if (neo4j.isInt(value)) {
    return value.inSafeRange() ? value.toNumber() : value.toString();
  }
  if (Array.isArray(value)) return value.map(toJs);
  return value;
}

function userProperties(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(properties)) if (!SCOPE_PROPERTIES.has(name)) out[name] = toJs(value);
  return out;
}

function toNode(node: Node): GraphNode {
  const label = node.labels[0] ?? 'Node';
  const key = String(node.properties[KEY_PROPERTY]);
  return { id: nodeId(label, key), label, key, properties: userProperties(node.properties) };
}
