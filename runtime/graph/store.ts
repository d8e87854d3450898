/**
 * The context graph store: the interface every engine implements (Kùzu
 * embedded by default, Bolt for Memgraph/Neo4j when GRAPH_URL is set).
 */
import type { GraphSink } from '../../connectors/contract.js';

export interface GraphStore {
  /** a writer bound to one organization and realm (what connector syncs write through) */
  sinkFor(orgId: string, realm: string): GraphSink;
}
