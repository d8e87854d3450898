import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { BoltGraphStore } from '../../runtime/graph/bolt-store.js';
import { KuzuGraphStore } from '../../runtime/graph/kuzu/store.js';
import { graphStoreConformance } from './graph-store.conformance.js';

/** a Kùzu store in a fresh folder, and the same folder opened again (a restart) */
function kuzuOnFreshFolder(options: { keySetBudget?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'graph-'));
  const open = async () => new KuzuGraphStore({ dir, maxOpen: 2, ...options });
  return { open, reopen: open };
}

const kuzu = kuzuOnFreshFolder();
graphStoreConformance('kuzu', kuzu.open, { rawCypher: true, reopen: kuzu.reopen });
// no key sets: every key is looked up (what a graph past its key-set budget does)
const kuzuWithoutKeySets = kuzuOnFreshFolder({ keySetBudget: 0 });
graphStoreConformance('kuzu without key sets', kuzuWithoutKeySets.open, { rawCypher: true, reopen: kuzuWithoutKeySets.reopen });

const graphUrl = process.env['GRAPH_URL'];
if (graphUrl) {
  graphStoreConformance('bolt', async () => BoltGraphStore.connect(graphUrl), { rawCypher: false });
} else {
  console.log('SKIP graph store conformance: bolt (GRAPH_URL is not set; no Memgraph/Neo4j server on this machine)');
  describe.skip('graph store conformance: bolt (GRAPH_URL is not set)', () => {
    it('runs the conformance suite against Memgraph/Neo4j over Bolt', () => undefined);
  });
}
