/** Picks the graph store: Bolt (Memgraph/Neo4j) when GRAPH_URL is set, else embedded Kùzu under DATA_DIR/graph. */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceConfig } from '../config.js';
import { BoltGraphStore } from './bolt-store.js';
import { warmUpEngine } from './kuzu/engine.js';
import { KuzuGraphStore } from './kuzu/store.js';
import type { GraphStore } from './store.js';

export async function openGraphStore(config: Pick<ServiceConfig, 'dataDir' | 'graphUrl'>): Promise<GraphStore> {
  if (config.graphUrl) return BoltGraphStore.connect(config.graphUrl);
  const dir = join(config.dataDir, 'graph');
  // made once here: later, a missing folder means it was removed under the server (health says down)
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await warmUpEngine();
  return new KuzuGraphStore({ dir, spoolDir: join(config.dataDir, 'graph-import') });
}
