/**
 * Indexes documents in the background, one at a time per process (embedding
 * is the slow part and the provider's rate limit is per key): `pending` ->
 * `indexing` -> `ready` (with its chunk count) or `failed` with the reason.
 * The bytes wait in memory until their turn; a document a restart caught
 * before it was indexed is marked `failed` ("interrupted") at start. With
 * feature `workers`, a dispatcher may take a job to the worker queue instead
 * (queued-indexing.ts); it then comes back through `indexNow`.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import type { RagCollectionDoc, RagDocumentDoc } from './documents.js';
import type { Embedders } from './embedder.js';
import { failureReason } from './errors.js';
import { chunkDocument } from '../../runtime/rag/chunking.js';
import type { ChunkStore } from '../../runtime/rag/chunk-store.js';
import { extractDocumentText } from '../../runtime/rag/extract.js';
import type { RuntimeClock } from '../../runtime/clock.js';
import type { OrgId } from '../../runtime/store/types.js';

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export interface IndexJob {
  readonly org: OrgId;
  readonly collection: RagCollectionDoc;
  readonly document: RagDocumentDoc;
  readonly bytes: Uint8Array;
}

export class RagIndexer {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  /** takes a job elsewhere (the worker queue) and answers true, or false to index it here */
  private dispatch: ((job: IndexJob) => boolean) | null = null;

  constructor(
    private readonly collections: Pick<Collections, 'ragDocuments' | 'settings'>,
    private readonly chunks: ChunkStore,
    private readonly embedders: Embedders,
    private readonly clock: RuntimeClock,
    private readonly logger: Logger,
  ) {}

  /** documents a previous process left pending or indexing: their bytes are gone, so they fail with a reason */
  async failInterrupted(org?: OrgId): Promise<void> {
    const stale = await this.collections.ragDocuments.findAcrossOrgs({ status: { in: ['pending', 'indexing'] } }, 10_000);
    for (const document of stale) {
      if (org !== undefined && document.org_id !== org) continue;
      await this.collections.ragDocuments.update(document.org_id, document.id, {
        status: 'failed',
        reason: 'interrupted: the service restarted before the document was indexed; add it again',
      });
    }
  }

  dispatchThrough(dispatch: (job: IndexJob) => boolean): void {
    this.dispatch = dispatch;
  }

  /** queues the job; resolves when it is queued, not when it is indexed */
  enqueue(job: IndexJob): void {
    if (this.dispatch?.(job) === true) return;
    this.pending += 1;
    this.tail = this.tail.then(() => this.run(job)).finally(() => (this.pending -= 1));
  }

  /** resolves once everything queued so far is indexed or failed */
  idle(): Promise<void> {
    return this.tail;
  }

  get queued(): number {
    return this.pending;
  }

  /** indexes a job a worker leased (queued-indexing.ts); the document ends ready or failed either way */
  indexNow(job: IndexJob): Promise<void> {
    return this.run(job);
  }

  private async run({ org, collection, document, bytes }: IndexJob): Promise<void> {
    const documents = this.collections.ragDocuments;
    try {
      // deleted while it waited: nothing to do
      if ((await documents.update(org, document.id, { status: 'indexing', reason: null })) === null) return;
      const { text, markdown } = await extractDocumentText(bytes, document.format);
      const chunks = chunkDocument(text, markdown, { targetChars: collection.chunk_target_chars, overlapChars: collection.chunk_overlap_chars });
      const client = await this.embedders.client(org, collection.embedding_model);
      const vectors = await client.embed(
        chunks.map((chunk) => (chunk.heading_path.length > 0 ? `${chunk.heading_path.join(' / ')}\n${chunk.text}` : chunk.text)),
        { dimension: collection.dimension },
      );
      // deleted while it was embedded: write nothing
      if ((await documents.get(org, document.id)) === null) return;
      this.chunks.replaceDocument(org, collection.id, document.id, chunks, vectors);
      await documents.update(org, document.id, {
        status: 'ready',
        reason: null,
        chunk_count: chunks.length,
        indexed_at: new Date(this.clock.now()).toISOString(),
      });
    } catch (error) {
      const reason = failureReason(error);
      this.logger.info({ document: document.id, collection: collection.id, reason }, 'rag document failed to index');
      await documents.update(org, document.id, { status: 'failed', reason: reason.slice(0, 1000) }).catch(() => undefined);
    }
  }
}
