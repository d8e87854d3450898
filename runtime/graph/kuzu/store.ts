/**
 * The embedded graph store: one Kùzu database file per organization and
 * realm under `<dir>/<org>/<realm>.kuzu`, opened on first use and kept in a
 * small LRU (each open database holds its own buffer pool).
 */
import { mkdir, access, constants } from 'node:fs/promises';
import { PRIVATE_DIR_MODE } from '../../file-modes.js';
import { join } from 'node:path';
import type { GraphSink } from '../../../connectors/contract.js';
import { runImport, type ImportInput, type ImportResult } from '../import/importer.js';
import { KuzuGraph, type KuzuGraphOptions } from './graph.js';
import { scopedSink, type GraphScope, type GraphStore } from '../store.js';

export interface KuzuStoreOptions extends Partial<KuzuGraphOptions> {
  /** the folder holding one subfolder per organization */
  readonly dir: string;
  /** where imports are spooled before they are loaded (made on first import, 0700) */
  readonly spoolDir?: string;
  /** databases kept open at once (least recently used ones are closed) */
  readonly maxOpen?: number;
}

/** the engine settings each realm's database opens with (the graph bench's bulk baseline uses the same) */
export const KUZU_GRAPH_DEFAULTS: KuzuGraphOptions = {
  // a cap, taken as needed: building the full-text index of 100k nodes needs more than 64 MiB
  bufferPoolBytes: 256 * 1024 * 1024,
  // the engine reserves this much address space per open file: 8 TiB by default, too much for several
  maxDbBytes: 2 ** 36,
  queryTimeoutMs: 30_000,
  // 16-32 bytes a key: at most 32 MB a graph, 256 MB for the 8 kept open
  keySetBudget: 1_000_000,
};
/** org ids and realm names become path segments */
const PATH_SEGMENT = /^[A-Za-z0-9_-]{1,100}$/;

interface OpenGraph {
  readonly graph: Promise<KuzuGraph>;
  users: number;
}

export class KuzuGraphStore implements GraphStore {
  readonly engine = 'kuzu';
  private readonly open = new Map<string, OpenGraph>();
  /** files being closed after eviction: reopening waits (the engine locks the file) */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly options: KuzuGraphOptions;
  private readonly maxOpen: number;
  private closed = false;

  constructor(private readonly config: KuzuStoreOptions) {
    this.options = { ...KUZU_GRAPH_DEFAULTS, ...stripUndefined(config) };
    this.maxOpen = config.maxOpen ?? 8;
  }

  upsertNodes: GraphStore['upsertNodes'] = (scope, nodes) => this.with(scope, (graph) => graph.upsertNodes(nodes));
  upsertRelationships: GraphStore['upsertRelationships'] = (scope, rels) => this.with(scope, (graph) => graph.upsertRelationships(rels));
  getNode: GraphStore['getNode'] = (scope, label, key) => this.with(scope, (graph) => graph.getNode(label, key));
  deleteNode: GraphStore['deleteNode'] = (scope, label, key) => this.with(scope, (graph) => graph.deleteNode(label, key));
  search: GraphStore['search'] = (scope, options) => this.with(scope, (graph) => graph.search(options));
  expand: GraphStore['expand'] = (scope, label, key, options) => this.with(scope, (graph) => graph.expand(label, key, options));
  cypher: GraphStore['cypher'] = (scope, query, params, options) => this.with(scope, (graph) => graph.cypher(query, params, options));
  stats: GraphStore['stats'] = (scope, perLabel) => this.with(scope, (graph) => graph.stats(perLabel));
  rebuildIndexes: GraphStore['rebuildIndexes'] = (scope) => this.with(scope, (graph) => graph.rebuildIndexes());

  async import(scope: GraphScope, input: ImportInput): Promise<ImportResult> {
    // the tables as they are before the input is read: the spool checks values against their columns
    const stored = await this.with(scope, async (graph) => graph.storedTables());
    const spoolDir = this.config.spoolDir ?? join(this.config.dir, '..', 'graph-import');
    return runImport(spoolDir, stored, input, (spool) => this.with(scope, (graph) => graph.bulkImport(spool, input.mode)));
  }

  sinkFor(orgId: string, realm: string): GraphSink {
    return scopedSink(this, { orgId, realm });
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('graph store closed');
    // no mkdir here: a folder removed under the running server is down, not silently recreated empty
    await access(this.config.dir, constants.W_OK);
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(entries.map(async (entry) => (await entry.graph).close()));
  }

  /** the database file of a scope (for tools that load it directly, like the benchmark) */
  pathOf(scope: GraphScope): string {
    if (!PATH_SEGMENT.test(scope.orgId) || !PATH_SEGMENT.test(scope.realm)) {
      throw new Error(`graph scope ${scope.orgId}/${scope.realm} is not a safe path segment`);
    }
    return join(this.config.dir, scope.orgId, `${scope.realm}.kuzu`);
  }

  private async with<T>(scope: GraphScope, work: (graph: KuzuGraph) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('graph store closed');
    const key = this.pathOf(scope);
    let entry = this.open.get(key);
    if (entry) {
      // most recently used last
      this.open.delete(key);
    } else {
      entry = { graph: this.openGraph(scope, key), users: 0 };
      entry.graph.catch(() => this.open.delete(key));
    }
    this.open.set(key, entry);
    entry.users += 1;
    try {
      return await work(await entry.graph);
    } finally {
      entry.users -= 1;
      this.evict();
    }
  }

  private async openGraph(scope: GraphScope, path: string): Promise<KuzuGraph> {
    await mkdir(join(this.config.dir, scope.orgId), { recursive: true, mode: PRIVATE_DIR_MODE });
    await this.closing.get(path);
    return KuzuGraph.open(path, this.options);
  }

  private evict(): void {
    for (const [key, entry] of this.open) {
      if (this.open.size <= this.maxOpen) return;
      if (entry.users > 0) continue;
      this.open.delete(key);
      const closed = entry.graph
        .then((graph) => graph.close())
        .catch(() => undefined)
        .finally(() => this.closing.delete(key));
      this.closing.set(key, closed);
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as Partial<T>;
}
