import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { BoltGraphStore } from '../../runtime/graph/bolt-store.js';
import { KuzuGraphStore } from '../../runtime/graph/kuzu-store.js';
import { graphStoreConformance } from './graph-store.conformance.js';

graphStoreConformance('kuzu', async () => new KuzuGraphStore({ dir: mkdtempSync(join(tmpdir(), 'graph-')), maxOpen: 2 }));
// no key sets: every key is looked up (what a graph past its key-set budget does)
graphStoreConformance('kuzu without key sets', async () => new KuzuGraphStore({ dir: mkdtempSync(join(tmpdir(), 'graph-')), maxOpen: 2, keySetBudget: 0 }));

const graphUrl = process.env['GRAPH_URL'];
if (graphUrl) {
  graphStoreConformance('bolt', async () => BoltGraphStore.connect(graphUrl), { rawCypher: false });
} else {
  console.log('SKIP graph store conformance: bolt (GRAPH_URL is not set; no Memgraph/Neo4j server on this machine)');
  describe.skip('graph store conformance: bolt (GRAPH_URL is not set)', () => {
    it('runs the conformance suite against Memgraph/Neo4j over Bolt', () => undefined);
  });
}
