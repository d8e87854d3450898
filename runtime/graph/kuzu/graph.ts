/**
 * One Kùzu database: the graph of one organization's realm. Holding each
 * realm in its own database file makes isolation structural: any Cypher run
 * here can only see this realm's records.
 *
 * Its parts, each in its own file: the connection and its serial queue
 * (session.ts), the tables (schema.ts) and full-text indexes (fts-index.ts),
 * the key sets that spare lookups (key-sets.ts), the write queue with group
 * commit (group-commit.ts) and the writer (writer.ts, with csv.ts and
 * row-statements.ts), the reads (queries.ts) and users' Cypher
 * (user-query.ts).
 */
import { groupNodes, groupRelationships } from '../batches.js';
import { KEY_PROPERTY, quote } from '../names.js';
import type {
  CypherOptions,
  CypherResult,
  ExpandOptions,
  GraphNode,
  GraphNodeInput,
  GraphRelationshipInput,
  GraphStats,
  IndexRebuild,
  SearchOptions,
  SearchResult,
  Subgraph,
} from '../store.js';
import type { ImportMode, ImportResult } from '../import/importer.js';
import { replaySpool } from '../import/replay.js';
import type { ImportSpool, StoredTables } from '../import/spool.js';
import { bulkLoad } from './bulk-load.js';
import { CsvStaging } from './csv.js';
import type { DatabaseOptions } from './engine.js';
import { FtsIndexes } from './fts-index.js';
import { GroupCommit } from './group-commit.js';
import { KeySets } from './key-sets.js';
import { GraphQueries, MAX_CYPHER_ROWS } from './queries.js';
import { GraphSchema } from './schema.js';
import { KuzuSession } from './session.js';
import { runUserCypher } from './user-query.js';
import { BatchWriter } from './writer.js';

export interface KuzuGraphOptions extends DatabaseOptions {
  /** user Cypher is interrupted after this long (it runs on its own connections: see user-query.ts) */
  readonly queryTimeoutMs: number;
  /** most keys and pairs the graph holds in its key sets (see key-sets.ts; 0: always look keys up) */
  readonly keySetBudget: number;
}

export class KuzuGraph {
  private readonly schema: GraphSchema;
  private readonly keySets: KeySets;
  private readonly staging = new CsvStaging();
  private readonly writes: GroupCommit;
  private readonly queries: GraphQueries;
  private readonly fts: FtsIndexes;
  private readonly queryTimeoutMs: number;

  private constructor(
    private readonly session: KuzuSession,
    options: KuzuGraphOptions,
  ) {
    this.queryTimeoutMs = options.queryTimeoutMs;
    this.schema = new GraphSchema(session);
    this.keySets = new KeySets(session, options.keySetBudget);
    const fts = new FtsIndexes(session, this.schema);
    this.fts = fts;
    const writer = new BatchWriter(session, this.schema, this.keySets, this.staging);
    this.writes = new GroupCommit({ session, schema: this.schema, fts, keySets: this.keySets, writer });
    this.queries = new GraphQueries(session, this.schema, fts);
  }

  static async open(path: string, options: KuzuGraphOptions): Promise<KuzuGraph> {
    const graph = new KuzuGraph(await KuzuSession.open(path, options), options);
    await graph.session.serial(() => graph.schema.load());
    return graph;
  }

  async close(): Promise<void> {
    await this.session.serial(async () => {
      await this.session.close();
      await this.staging.close();
    });
  }

  /**
   * Upserts by (label, _key), all or nothing: a batch goes whole into one
   * transaction, which batches arriving meanwhile may share (see
   * group-commit.ts). New nodes are appended, stored ones updated only when
   * a given property changed (see writer.ts).
   */
  async upsertNodes(nodes: readonly GraphNodeInput[]): Promise<number> {
    const { byLabel, count } = groupNodes(nodes);
    return this.writes.enqueue({ kind: 'nodes', byLabel, count });
  }

  /**
   * Upserts by (type, from, to), all or nothing like upsertNodes: missing
   * end nodes are created with only their key, new relationships appended,
   * stored ones updated only when a given property changed.
   */
  async upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<number> {
    const { groups, count } = groupRelationships(relationships);
    return this.writes.enqueue({ kind: 'relationships', groups, count });
  }

  /** the stored tables and their column types (an import is checked against them before it is written) */
  storedTables(): StoredTables {
    return new Map([...this.schema.tables].map(([name, table]) => [name, { kind: table.kind, columns: new Map(table.columns) }]));
  }

  /**
   * A spooled import: one bulk COPY transaction (see bulk-load.ts), or when
   * merging into tables that hold rows, the spool's rows as upserts.
   */
  async bulkImport(spool: ImportSpool, mode: ImportMode): Promise<ImportResult> {
    const { session, schema, fts, keySets } = this;
    const loaded = await session.serial(() => bulkLoad({ session, schema, fts, keySets }, spool, mode));
    if (loaded !== 'upserts') return { ...loaded, method: 'copy' };
    const upserted = await replaySpool(spool, {
      upsertNodes: (nodes) => this.upsertNodes(nodes),
      upsertRelationships: (rels) => this.upsertRelationships(rels),
    });
    return { ...upserted, method: 'upsert' };
  }

  async deleteNode(label: string, key: string): Promise<{ relationshipsDeleted: number } | null> {
    return this.session.serial(async () => {
      if (!this.schema.table(label, 'NODE')) return null;
      const match = `MATCH (n:${quote(label)} {${quote(KEY_PROPERTY)}: $key})`;
      const found = await this.session.run(`${match} RETURN count(n) AS c`, { key });
      if (Number(found[0]?.['c'] ?? 0) === 0) return null;
      const hasRels = this.schema.names('REL').length > 0;
      const relationshipsDeleted = hasRels ? Number((await this.session.run(`${match}-[r]-() RETURN count(DISTINCT ID(r)) AS c`, { key }))[0]?.['c'] ?? 0) : 0;
      await this.session.transaction(async () => {
        await this.session.run(`${match} ${hasRels ? 'DETACH ' : ''}DELETE n`, { key });
      });
      // its relationships' pairs stay in their sets: a pair taken as maybe stored is only looked up
      this.keySets.forget(label, key);
      return { relationshipsDeleted };
    });
  }

  getNode(label: string, key: string): Promise<GraphNode | null> {
    return this.session.serial(() => this.queries.getNode(label, key));
  }

  search(options: SearchOptions): Promise<SearchResult> {
    return this.session.serial(() => this.queries.search(options));
  }

  expand(label: string, key: string, options: ExpandOptions): Promise<Subgraph | null> {
    return this.session.serial(() => this.queries.expand(label, key, options));
  }

  /** graph maintenance: every label's full-text index dropped and built again from its rows, between other calls */
  rebuildIndexes(): Promise<IndexRebuild> {
    return this.session.serial(async () => {
      const labels = this.schema.names('NODE').sort();
      for (const label of labels) {
        await this.fts.drop(label);
        await this.fts.ensure(label);
      }
      return { labels };
    });
  }

  stats(perLabel: boolean): Promise<GraphStats> {
    return this.session.serial(() => this.queries.stats(perLabel));
  }

  /** a user's query: judged by the engine's plan and run on a connection of its own (see user-query.ts) */
  cypher(query: string, params: Record<string, unknown>, options: CypherOptions): Promise<CypherResult> {
    return this.session.serial(() =>
      runUserCypher(this.session.database, query, params, {
        allowWrite: options.allowWrite,
        timeoutMs: this.queryTimeoutMs,
        maxRows: MAX_CYPHER_ROWS,
        // a user write is not followed key by key (nor its schema changes): both are read again
        onWrite: async () => {
          options.onWrite?.();
          this.keySets.clear();
          await this.schema.load().catch(() => undefined);
        },
      }),
    );
  }
}
