/**
 * The graph's own reads: a node, full-text search, expansion around a node,
 * counts. Each runs inside the session's queue (the caller's `serial`).
 */
import { KEY_PROPERTY, nodeId, quote } from '../names.js';
import type { ExpandOptions, GraphNode, GraphRelationship, GraphStats, SearchOptions, SearchResult, Subgraph } from '../store.js';
import { asText, propertiesOf } from '../values.js';
import { FTS_INDEX, type FtsIndexes } from './fts-index.js';
import type { GraphSchema } from './schema.js';
import type { KuzuSession } from './session.js';

/** most rows a user Cypher query returns (and an expansion reads per step) */
export const MAX_CYPHER_ROWS = 10_000;

export class GraphQueries {
  constructor(
    private readonly session: KuzuSession,
    private readonly schema: GraphSchema,
    private readonly fts: FtsIndexes,
  ) {}

  async getNode(label: string, key: string): Promise<GraphNode | null> {
    if (!this.schema.table(label, 'NODE')) return null;
    const rows = await this.session.run(`MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key}) RETURN n`, { key });
    return rows[0] ? toNode(rows[0]['n']) : null;
  }

  async search(options: SearchOptions): Promise<SearchResult> {
    const labels = this.schema.names('NODE').filter((name) => !options.labels || options.labels.includes(name));
    const items: SearchResult['items'] = [];
    let total = 0;
    for (const label of labels) {
      await this.fts.ensure(label);
      const call = `CALL QUERY_FTS_INDEX('${label}', '${FTS_INDEX}', $query)`;
      const counted = await this.session.run(`${call} RETURN count(*) AS c`, { query: options.query });
      const matches = Number(counted[0]?.['c'] ?? 0);
      if (matches === 0) continue;
      total += matches;
      // `top` lets the index stop scoring early (about 2x faster than ORDER BY ... LIMIT alone)
      const ranked = `CALL QUERY_FTS_INDEX('${label}', '${FTS_INDEX}', $query, top := ${Math.trunc(options.limit)})`;
      const rows = await this.session.run(`${ranked} RETURN node, score ORDER BY score DESC LIMIT ${Math.trunc(options.limit)}`, { query: options.query });
      for (const row of rows) items.push({ ...toNode(row['node']), score: Number(row['score']) });
    }
    items.sort((left, right) => right.score - left.score);
    return { items: items.slice(0, options.limit), total };
  }

  async expand(label: string, key: string, options: ExpandOptions): Promise<Subgraph | null> {
    if (!this.schema.table(label, 'NODE')) return null;
    const start = await this.session.run(`MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key}) RETURN n`, { key });
    if (!start[0]) return null;
    const nodes = new Map<string, GraphNode>();
    const first = toNode(start[0]['n']);
    nodes.set(first.id, first);
    const relationships = new Map<string, GraphRelationship>();
    const relTypes = this.schema
      .names('REL')
      .filter((name) => !options.types || options.types.includes(name))
      .map(quote);
    if (relTypes.length === 0) return { nodes: [...nodes.values()], relationships: [] };
    const typeFilter = options.types ? `:${relTypes.join('|')}` : '';
    const directions = options.direction === 'both' ? (['out', 'in'] as const) : [options.direction];
    let frontier = new Map<string, Set<string>>([[label, new Set([key])]]);
    for (let level = 0; level < options.depth && frontier.size > 0; level += 1) {
      const next = new Map<string, Set<string>>();
      for (const [fromLabel, keys] of frontier) {
        for (const direction of directions) {
          const pattern = direction === 'out' ? `-[r${typeFilter}]->` : `<-[r${typeFilter}]-`;
          const rows = await this.session.run(
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
  }

  async stats(perLabel: boolean): Promise<GraphStats> {
    const labels: Record<string, number> = {};
    const types: Record<string, number> = {};
    let nodeCount = 0;
    let relCount = 0;
    for (const [name, table] of this.schema.tables) {
      const rows =
        table.kind === 'NODE'
          ? await this.session.run(`MATCH (n:${quote(name)}) RETURN count(n) AS c`)
          : await this.session.run(`MATCH ()-[r:${quote(name)}]->() RETURN count(r) AS c`);
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
  }
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
