import { join } from 'node:path';
import type { ServiceConfig } from '../config.js';
import { MongoMetadataStore } from './mongo.js';
import { SqliteMetadataStore } from './sqlite.js';
import type { MetadataStore } from './types.js';

/** MongoDB when MONGODB_URL is set, else the SQLite file `<DATA_DIR>/metadata.db`. */
export async function openMetadataStore(config: ServiceConfig): Promise<MetadataStore> {
  if (config.mongodbUrl) return MongoMetadataStore.connect(config.mongodbUrl);
  return new SqliteMetadataStore(join(config.dataDir, 'metadata.db'));
}
