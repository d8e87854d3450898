/**
 * The context graph store: the interface every engine implements (Kùzu
 * embedded by default, Bolt for Memgraph/Neo4j when GRAPH_URL is set).
 *
 * Every call names its scope (organization + realm): a store never lets one
 * scope see another's records. Errors a caller can fix are ServiceErrors
 * (validation_error, invalid_node_id, cypher_syntax_error, forbidden).
 */
import {
  GRAPH_WRITE_FAILED,
  ToolError,
  type GraphNode,
  type GraphNodeInput,
  type GraphRelationship,
  type GraphRelationshipInput,
  type GraphSink,
} from '../../connectors/contract.js';
import { ServiceError } from '../errors.js';
import type { ImportInput, ImportResult } from './import/importer.js';

// nodes and relationships as the contract's graph port spells them: one definition for the store and the port
export type { GraphNode, GraphNodeInput, GraphRelationship, GraphRelationshipInput };

/** whose records: one organization's realm */
export interface GraphScope {
  readonly orgId: string;
  readonly realm: string;
}

export interface SearchOptions {
  readonly query: string;
  readonly limit: number;
  /** only these labels; absent: all */
  readonly labels?: readonly string[] | undefined;
}

export interface SearchResult {
  readonly items: (GraphNode & { readonly score: number })[];
  /** how many nodes matched in all (before the limit) */
  readonly total: number;
}

type ExpandDirection = 'both' | 'out' | 'in';

export interface ExpandOptions {
  /** 1..5 hops */
  readonly depth: number;
  readonly direction: ExpandDirection;
  /** only these relationship types; absent: all */
  readonly types?: readonly string[] | undefined;
  /** most nodes returned (the start node included) */
  readonly limit: number;
}

export interface Subgraph {
  readonly nodes: GraphNode[];
  readonly relationships: GraphRelationship[];
}

export interface CypherOptions {
  /** false: a query that writes is refused with 403 `forbidden` (the engine enforces it too) */
  readonly allowWrite: boolean;
  /** told when the engine judged the query a write (the change feed announces it) */
  readonly onWrite?: () => void;
}

export interface CypherResult {
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
}

export interface GraphStats {
  readonly node_count: number;
  readonly relationship_count: number;
  readonly labels?: Record<string, number>;
  readonly relationship_types?: Record<string, number>;
}

/** what an index rebuild did (graph maintenance) */
export interface IndexRebuild {
  /** the node labels whose indexes were built again */
  readonly labels: string[];
}

export interface GraphStore {
  /** `kuzu` or `bolt`, as /health reports it */
  readonly engine: string;
  /** upserts by (label, _key), one transaction; properties not given keep their value; returns how many distinct nodes */
  upsertNodes(scope: GraphScope, nodes: readonly GraphNodeInput[]): Promise<number>;
  /** upserts by (type, from, to), one transaction; missing end nodes are created with only their `_key` */
  upsertRelationships(scope: GraphScope, relationships: readonly GraphRelationshipInput[]): Promise<number>;
  getNode(scope: GraphScope, label: string, key: string): Promise<GraphNode | null>;
  /** removes the node and its relationships; null when it does not exist */
  deleteNode(scope: GraphScope, label: string, key: string): Promise<{ relationshipsDeleted: number } | null>;
  /** full-text search over the string properties, best first */
  search(scope: GraphScope, options: SearchOptions): Promise<SearchResult>;
  /** the neighbourhood of a node; null when the node does not exist */
  expand(scope: GraphScope, label: string, key: string, options: ExpandOptions): Promise<Subgraph | null>;
  cypher(scope: GraphScope, query: string, params: Record<string, unknown>, options: CypherOptions): Promise<CypherResult>;
  stats(scope: GraphScope, perLabel: boolean): Promise<GraphStats>;
  /** graph maintenance: drops and builds again the realm's indexes (Kùzu: every label's full-text index) */
  rebuildIndexes(scope: GraphScope): Promise<IndexRebuild>;
  /**
   * A bulk import (NDJSON or CSV, streamed): checked whole and spooled before
   * anything is written, then loaded (see import/importer.ts)
   */
  import(scope: GraphScope, input: ImportInput): Promise<ImportResult>;
  /** a writer bound to one organization and realm (what connector syncs write through) */
  sinkFor(orgId: string, realm: string): GraphSink;
  /** throws when the engine cannot answer */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The sink every store hands out: the store's own upserts, scope bound. A
 * failure names the graph, so a sync that the graph refused is not reported
 * as its connector's system being unreachable.
 */
export function scopedSink(store: GraphStore, scope: GraphScope): GraphSink {
  return {
    upsertNodes: async (nodes) => {
      await store.upsertNodes(scope, nodes).catch(graphWriteFailed);
    },
    upsertRelationships: async (relationships) => {
      await store.upsertRelationships(scope, relationships).catch(graphWriteFailed);
    },
  };
}

function graphWriteFailed(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ServiceError && error.details ? { graph_error: error.code, ...error.details } : undefined;
  throw new ToolError(GRAPH_WRITE_FAILED, `the context graph refused the synced records: ${message}`, details);
}
