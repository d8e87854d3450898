/** Picks the graph store: Bolt (Memgraph/Neo4j) when GRAPH_URL is set, else embedded Kùzu under DATA_DIR/graph. */
import { join } from 'node:path';
import type { ServiceConfig } from '../config.js';
import { BoltGraphStore } from './bolt-store.js';
import { KuzuGraphStore } from './kuzu-store.js';
import type { GraphStore } from './store.js';

export async function openGraphStore(config: Pick<ServiceConfig, 'dataDir' | 'graphUrl'>): Promise<GraphStore> {
  if (config.graphUrl) return BoltGraphStore.connect(config.graphUrl);
  return new KuzuGraphStore({ dir: join(config.dataDir, 'graph') });
}
