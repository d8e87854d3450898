import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { MongoMetadataStore } from '../../runtime/store/mongo.js';
import { SqliteMetadataStore } from '../../runtime/store/sqlite.js';
import { metadataStoreConformance } from './metadata-store.conformance.js';

metadataStoreConformance('sqlite', async () => new SqliteMetadataStore(join(mkdtempSync(join(tmpdir(), 'meta-')), 'metadata.db')));

const mongoUrl = process.env['MONGODB_URL'];
if (mongoUrl) {
  metadataStoreConformance('mongodb', () => MongoMetadataStore.connect(mongoUrl));
} else {
  console.log('SKIP metadata store conformance: mongodb (MONGODB_URL is not set; no MongoDB server on this machine)');
  describe.skip('metadata store conformance: mongodb (MONGODB_URL is not set)', () => {
    it('runs the conformance kit against MongoDB', () => undefined);
  });
}
