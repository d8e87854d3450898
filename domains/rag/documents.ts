/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';
import type { DocumentFormat } from '../../runtime/rag/extract.js';

export interface RagCollectionDoc extends StoredFields {
  /** unique in the organization */
  readonly name: string;
  /** the realm's name */
  readonly realm: string;
  readonly description: string | null;
  /** fixed at creation: every chunk of the collection is embedded by this model */
  readonly embedding_model: string;
  /** fixed at creation: every vector has this many components */
  readonly dimension: number;
  readonly chunk_target_chars: number;
  readonly chunk_overlap_chars: number;
  readonly created_by: string;
  /** fixed at creation: the connector source whose documents a sync brings in (source-sync.ts); absent on older collections */
  readonly source_id?: string | null;
}

export const RAG_DOCUMENT_STATUSES = ['pending', 'indexing', 'ready', 'failed'] as const;
export type RagDocumentStatus = (typeof RAG_DOCUMENT_STATUSES)[number];

export interface RagDocumentDoc extends StoredFields {
  readonly collection_id: string;
  readonly realm: string;
  /** a file name or path; unique in the collection (a new upload of the same name replaces it) */
  readonly name: string;
  readonly format: DocumentFormat;
  /** where it came from: an upload, a file-store path, a source sync, ingest or memory */
  readonly origin: 'upload' | 'file' | 'source' | 'ingest' | 'memory';
  /** the file-store path, source id and path, or pipeline name it came from */
  readonly origin_ref: string | null;
  /** sha256 of the bytes: a re-sync with the same hash is not indexed again */
  readonly content_hash: string;
  readonly size_bytes: number;
  /** caller's metadata: search filters match these keys exactly */
  readonly metadata: Record<string, string>;
  readonly status: RagDocumentStatus;
  /** why indexing failed (status `failed`) */
  readonly reason: string | null;
  readonly chunk_count: number;
  readonly indexed_at: string | null;
}
