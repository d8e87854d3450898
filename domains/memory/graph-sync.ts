/**
 * Memory graph sync (`POST /memory/sync`): a realm's memory entries as
 * `Memory` nodes (key: the entry id) linked by `MENTIONS` to the entities
 * their title and text name (mentions.ts). Idempotent: each entry's node
 * carries a digest of its fields, and nodes and links are diffed against
 * what the graph holds, so a second sync writes nothing; an edited entry's
 * node and links follow its new text, a deleted entry's node and links go.
 * Recall's `expand` reads the links back.
 */
import { createHash } from 'node:crypto';
import type { Collections } from '../collections.js';
import type { MemoryDoc } from './documents.js';
import { MentionIndex, MAX_MENTIONS_PER_MEMORY, type EntityRef } from './mentions.js';
import type { GraphNode, GraphScope, GraphStore } from '../../runtime/graph/store.js';
import { quote } from '../../runtime/graph/names.js';
import type { OrgId } from '../../runtime/store/types.js';

const MEMORY_LABEL = 'Memory';
const MENTIONS = 'MENTIONS';
/** rows read per Cypher page (the engine answers at most 10,000) */
const PAGE = 5000;

export interface MemorySyncResult {
  readonly realm: string;
  readonly memories: number;
  readonly nodes_upserted: number;
  readonly nodes_deleted: number;
  readonly links_added: number;
  readonly links_removed: number;
}

interface NodeRow {
  readonly label: string;
  readonly key: string;
  readonly properties: Record<string, unknown>;
}

const linkId = (memory: string, entity: EntityRef): string => `${memory}\u0000${entity.label}\u0000${entity.key}`;

export class MemoryGraph {
  constructor(
    private readonly collections: Pick<Collections, 'memory'>,
    private readonly graph: GraphStore,
  ) {}

  async sync(org: OrgId, realm: string): Promise<MemorySyncResult> {
    const scope: GraphScope = { orgId: org, realm };
    const entries = await this.entries(org, realm);
    const stats = await this.graph.stats(scope, true);
    const labels = Object.keys(stats.labels ?? {});
    const index = new MentionIndex();
    for (const label of labels.filter((name) => name !== MEMORY_LABEL)) {
      for (const node of await this.nodes(scope, `MATCH (n:${quote(label)}) RETURN n ORDER BY n._key`, 'n')) {
        index.add({ label: node.label, key: node.key }, node.properties['name']);
      }
    }
    const hasMemories = labels.includes(MEMORY_LABEL);
    const existing = new Map<string, unknown>();
    if (hasMemories) {
      for (const node of await this.nodes(scope, `MATCH (m:${MEMORY_LABEL}) RETURN m ORDER BY m._key`, 'm')) existing.set(node.key, node.properties['digest']);
    }
    const linked = new Map<string, { memory: string; entity: EntityRef }>();
    if (hasMemories && Object.keys(stats.relationship_types ?? {}).includes(MENTIONS)) {
      const query = `MATCH (m:${MEMORY_LABEL})-[:${MENTIONS}]->(n) RETURN m._key AS memory, n AS entity ORDER BY memory, entity._key`;
      for (const row of await this.rows(scope, query)) {
        const entity = row['entity'] as NodeRow;
        const memory = String(row['memory']);
        linked.set(linkId(memory, entity), { memory, entity: { label: entity.label, key: entity.key } });
      }
    }

    const upserts = entries.filter((entry) => existing.get(entry.id) !== digestOf(entry));
    if (upserts.length > 0) await this.graph.upsertNodes(scope, upserts.map(memoryNode));
    const present = new Set(entries.map((entry) => entry.id));
    const gone = [...existing.keys()].filter((key) => !present.has(key));
    for (const key of gone) await this.graph.deleteNode(scope, MEMORY_LABEL, key);

    const wanted = new Map<string, { memory: string; entity: EntityRef }>();
    for (const entry of entries) {
      for (const entity of index.find(`${entry.title ?? ''}\n${entry.text}`).slice(0, MAX_MENTIONS_PER_MEMORY)) {
        wanted.set(linkId(entry.id, entity), { memory: entry.id, entity });
      }
    }
    const add = [...wanted].filter(([id]) => !linked.has(id)).map(([, link]) => link);
    const remove = [...linked].filter(([id, link]) => !wanted.has(id) && present.has(link.memory)).map(([, link]) => link);
    if (add.length > 0) {
      await this.graph.upsertRelationships(
        scope,
        add.map((link) => ({ type: MENTIONS, from_label: MEMORY_LABEL, from_key: link.memory, to_label: link.entity.label, to_key: link.entity.key })),
      );
    }
    for (const link of remove) {
      await this.graph.cypher(
        scope,
        `MATCH (m:${MEMORY_LABEL} {_key: $memory})-[r:${MENTIONS}]->(n:${quote(link.entity.label)} {_key: $key}) DELETE r`,
        { memory: link.memory, key: link.entity.key },
        { allowWrite: true },
      );
    }
    const result: MemorySyncResult = {
      realm,
      memories: entries.length,
      nodes_upserted: upserts.length,
      nodes_deleted: gone.length,
      links_added: add.length,
      links_removed: remove.length,
    };
    return result;
  }

  /** the entities a synced entry links to (none before its first sync) */
  async entitiesOf(org: OrgId, entry: MemoryDoc, limit: number): Promise<GraphNode[]> {
    const scope: GraphScope = { orgId: org, realm: entry.realm };
    const subgraph = await this.graph.expand(scope, MEMORY_LABEL, entry.id, { depth: 1, direction: 'out', types: [MENTIONS], limit: limit + 1 });
    if (!subgraph) return [];
    return subgraph.nodes.filter((node) => !(node.label === MEMORY_LABEL && node.key === entry.id)).slice(0, limit);
  }

  private async entries(org: OrgId, realm: string): Promise<MemoryDoc[]> {
    const entries: MemoryDoc[] = [];
    let after: string | null = null;
    do {
      const page = await this.collections.memory.list(org, { filter: { realm }, limit: 200, after });
      entries.push(...page.items);
      after = page.nextAfter;
    } while (after !== null);
    return entries;
  }

  /** every node a paged query returns in column `column` */
  private async nodes(scope: GraphScope, query: string, column: string): Promise<NodeRow[]> {
    return (await this.rows(scope, query)).map((row) => row[column] as NodeRow);
  }

  private async rows(scope: GraphScope, query: string): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    for (let skip = 0; ; skip += PAGE) {
      const page = await this.graph.cypher(scope, `${query} SKIP ${skip} LIMIT ${PAGE}`, {}, { allowWrite: false });
      rows.push(...page.rows);
      if (page.rows.length < PAGE) return rows;
    }
  }
}

/** what decides whether an entry's node needs writing */
function digestOf(entry: MemoryDoc): string {
  const fields = [entry.kind, entry.title, entry.text, entry.tags, entry.importance];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 32);
}

function memoryNode(entry: MemoryDoc) {
  return {
    label: MEMORY_LABEL,
    properties: {
      _key: entry.id,
      kind: entry.kind,
      title: entry.title ?? '',
      text: entry.text,
      tags: JSON.stringify(entry.tags),
      // importance stays out: 0 and 1 would make the column INT64, refusing 0.5 after them
      digest: digestOf(entry),
    },
  };
}
