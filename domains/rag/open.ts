/** The RAG domain as the service assembles it (gateway/app.ts): chunk store, embedders, indexer, service and search. */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { AutoEmbed } from './auto-embed.js';
import { Embedders } from './embedder.js';
import { RagIndexer } from './indexer.js';
import { RagSearch } from './search.js';
import { RagService } from './service.js';
import type { NetPort } from '../../connectors/contract.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import type { ServiceConfig } from '../../runtime/config.js';
import type { FileStore } from '../../runtime/files/store.js';
import { ChunkStore } from '../../runtime/rag/chunk-store.js';

export interface OpenRagOptions {
  readonly collections: Collections;
  readonly config: ServiceConfig;
  readonly egress: NetPort;
  readonly files: FileStore;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
}

export interface OpenedRag {
  readonly service: RagService;
  readonly search: RagSearch;
  readonly embedders: Embedders;
  /** auto-embed of memory entries and ingested bodies (setting `auto_embed_on_ingest`) */
  readonly autoEmbed: AutoEmbed;
  /** waits for the documents being indexed, then closes the chunk store */
  close(): Promise<void>;
}

export function openRag({ collections, config, egress, files, clock, logger }: OpenRagOptions): OpenedRag {
  const chunks = new ChunkStore(config.features.rag ? join(config.dataDir, 'rag.db') : ':memory:');
  const embedders = new Embedders(collections, config, egress);
  const indexer = new RagIndexer(collections, chunks, embedders, clock, logger);
  const service = new RagService(collections, chunks, embedders, indexer, files);
  const search = new RagSearch(collections, chunks, embedders);
  return {
    service,
    search,
    embedders,
    autoEmbed: new AutoEmbed(service, search, embedders, logger),
    close: async () => {
      await indexer.idle();
      chunks.close();
    },
  };
}
