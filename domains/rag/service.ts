/**
 * RAG collections and their documents (feature `rag`): what `/rag` calls.
 * A collection lives in a realm; its embedding model and dimension are fixed
 * at creation (the dimension is probed with one embeddings call unless given).
 * Documents arrive as bytes (an upload, a file-store path, a source sync) and
 * are indexed in the background (indexer.ts).
 */
import type { Collections } from '../collections.js';
import type { RagCollectionDoc, RagDocumentDoc, RagDocumentStatus } from './documents.js';
import type { Embedders } from './embedder.js';
import { ragErrorOf } from './errors.js';
import { sha256, type RagIndexer } from './indexer.js';
import { ServiceError } from '../../runtime/errors.js';
import type { FileStore } from '../../runtime/files/store.js';
import type { ChunkStore } from '../../runtime/rag/chunk-store.js';
import { DEFAULT_CHUNKING } from '../../runtime/rag/chunking.js';
import { formatOf, type DocumentFormat } from '../../runtime/rag/extract.js';
import { getOr404, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface CollectionFields {
  readonly name: string;
  readonly realm: string;
  readonly description?: string | null | undefined;
  readonly embedding_model?: string | undefined;
  readonly dimension?: number | undefined;
  readonly chunk_target_chars?: number | undefined;
  readonly chunk_overlap_chars?: number | undefined;
  /** a source checked by RagSourceSync.requireFeed */
  readonly source_id?: string | null | undefined;
}

export interface DocumentInput {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly format?: DocumentFormat | undefined;
  readonly contentType?: string | undefined;
  readonly metadata?: Record<string, string> | undefined;
  readonly origin?: RagDocumentDoc['origin'];
  readonly originRef?: string | null;
}

export class RagService {
  constructor(
    private readonly collections: Pick<Collections, 'ragCollections' | 'ragDocuments' | 'realms' | 'settings'>,
    private readonly chunks: ChunkStore,
    private readonly embedders: Embedders,
    readonly indexer: RagIndexer,
    private readonly files: FileStore,
  ) {}

  get collectionListing(): Pick<Collections['ragCollections'], 'list' | 'revision'> {
    return this.collections.ragCollections;
  }

  get documentListing(): Pick<Collections['ragDocuments'], 'list' | 'revision'> {
    return this.collections.ragDocuments;
  }

  /** 400 naming `realm` unless it is a realm of the organization */
  async requireRealm(org: OrgId, realm: string): Promise<void> {
    if (!(await this.collections.realms.findOne(org, { name: realm }))) {
      throw new ServiceError('validation_error', `invalid realm: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    }
  }

  async createCollection(org: OrgId, createdBy: string, fields: CollectionFields): Promise<RagCollectionDoc> {
    await this.requireRealm(org, fields.realm);
    const model = fields.embedding_model ?? (await this.embedders.defaultModel(org));
    let dimension = fields.dimension;
    if (dimension === undefined) {
      try {
        const client = await this.embedders.client(org, model);
        const [probe] = await client.embed(['dimension probe']);
        dimension = probe?.length ?? 0;
      } catch (error) {
        throw ragErrorOf(error);
      }
    }
    const target = fields.chunk_target_chars ?? DEFAULT_CHUNKING.targetChars;
    const overlap = fields.chunk_overlap_chars ?? Math.min(DEFAULT_CHUNKING.overlapChars, Math.floor(target / 2));
    if (overlap > target / 2)
      throw new ServiceError('validation_error', 'chunk_overlap_chars is at most half of chunk_target_chars', {
        issues: [{ path: 'chunk_overlap_chars', message: 'at most half of chunk_target_chars' }],
      });
    return unique('collection', () =>
      this.collections.ragCollections.insert(org, {
        name: fields.name,
        realm: fields.realm,
        description: fields.description ?? null,
        embedding_model: model,
        dimension,
        chunk_target_chars: target,
        chunk_overlap_chars: overlap,
        created_by: createdBy,
        source_id: fields.source_id ?? null,
      }),
    );
  }

  getCollection(org: OrgId, id: string): Promise<RagCollectionDoc> {
    return getOr404(this.collections.ragCollections, org, id, 'collection');
  }

  /** the organization's collections of a realm */
  collectionsOfRealm(org: OrgId, realm: string): Promise<RagCollectionDoc[]> {
    return this.collections.ragCollections.findAll(org, { realm });
  }

  async findCollectionByName(org: OrgId, name: string): Promise<RagCollectionDoc | null> {
    return this.collections.ragCollections.findOne(org, { name });
  }

  async deleteCollection(org: OrgId, id: string): Promise<void> {
    const collection = await this.getCollection(org, id);
    await this.collections.ragDocuments.deleteWhere(org, { collection_id: collection.id });
    this.chunks.deleteCollection(org, collection.id);
    await this.collections.ragCollections.delete(org, collection.id);
  }

  async chunkCount(org: OrgId, collection: string): Promise<number> {
    return this.chunks.countChunks(org, collection);
  }

  /**
   * Adds (or replaces, by name) a document and queues it for indexing. A
   * document whose bytes hash the same as the stored one is left as it is
   * (`unchanged: true`), so a re-sync re-indexes changed files only.
   */
  async addDocument(org: OrgId, collectionId: string, input: DocumentInput): Promise<{ document: RagDocumentDoc; unchanged: boolean }> {
    const collection = await this.getCollection(org, collectionId);
    const format = input.format ?? formatOf(input.name, input.contentType);
    if (format === null)
      throw new ServiceError('validation_error', `cannot tell the format of "${input.name}": name it with an extension or give format`, {
        issues: [{ path: 'format', message: 'one of text, markdown, html, pdf, json, ndjson' }],
      });
    const hash = sha256(input.bytes);
    const existing = await this.collections.ragDocuments.findOne(org, { collection_id: collection.id, name: input.name });
    if (existing !== null && existing.content_hash === hash && existing.status !== 'failed') return { document: existing, unchanged: true };
    const fields = {
      format,
      origin: input.origin ?? 'upload',
      origin_ref: input.originRef ?? null,
      content_hash: hash,
      size_bytes: input.bytes.byteLength,
      metadata: input.metadata ?? {},
      status: 'pending' as RagDocumentStatus,
      reason: null,
      chunk_count: 0,
      indexed_at: null,
    };
    const document =
      existing === null
        ? await unique('document', () =>
            this.collections.ragDocuments.insert(org, { collection_id: collection.id, realm: collection.realm, name: input.name, ...fields }),
          )
        : await this.collections.ragDocuments.update(org, existing.id, fields);
    if (document === null) throw new ServiceError('not_found', `document ${input.name} not found`);
    this.indexer.enqueue({ org, collection, document, bytes: input.bytes });
    return { document, unchanged: false };
  }

  /** A file of the organization's file store as a document (its path is the document's name). */
  async addFile(org: OrgId, collectionId: string, path: string, metadata?: Record<string, string>, format?: DocumentFormat) {
    const { stream, info } = await this.files.open(org, path);
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    return this.addDocument(org, collectionId, { name: info.path, bytes: Buffer.concat(parts), metadata, format, origin: 'file', originRef: info.path });
  }

  async getDocument(org: OrgId, collectionId: string, id: string): Promise<RagDocumentDoc> {
    const document = await getOr404(this.collections.ragDocuments, org, id, 'document');
    if (document.collection_id !== collectionId) throw new ServiceError('not_found', `document ${id} not found`);
    return document;
  }

  /** the documents of a collection (for the source sync's bookkeeping) */
  documentsOf(org: OrgId, collectionId: string): Promise<RagDocumentDoc[]> {
    return this.collections.ragDocuments.findAll(org, { collection_id: collectionId });
  }

  async deleteDocument(org: OrgId, collectionId: string, id: string): Promise<void> {
    const document = await this.getDocument(org, collectionId, id);
    await this.collections.ragDocuments.delete(org, document.id);
    this.chunks.deleteDocument(org, collectionId, document.id);
  }
}
