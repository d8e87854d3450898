/**
 * /rag (feature `rag`): collections of documents, chunked and embedded in the
 * background, and hybrid search over them (domains/rag). A document arrives
 * as `content` (text), `content_base64` (any format, e.g. PDF) or a file-store
 * `path`; its status moves pending -> indexing -> ready | failed (reason).
 * A collection created with a `source_id` is fed by that connector source:
 * `POST /rag/collections/:id/sync` brings in what changed (source-sync.ts).
 */
import { z } from 'zod';
import type { RagCollectionDoc, RagDocumentDoc } from '../../domains/rag/documents.js';
import { RAG_DOCUMENT_STATUSES } from '../../domains/rag/documents.js';
import { MAX_SEARCH_K } from '../../domains/rag/search.js';
import { ServiceError } from '../../runtime/errors.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { DOCUMENT_FORMATS } from '../../runtime/rag/extract.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName, safeText } from '../safe-text.js';
import type { Services } from '../services.js';

/** the largest document, decoded (a base64 body is a third larger; the route's body limit allows for that) */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const NAME = safeName(z.string().trim().min(1).max(200));
const REALM = z.string().min(1).max(100);
const METADATA = z
  .record(z.string().min(1).max(100), z.string().max(500))
  .refine((value) => Object.keys(value).length <= 32, { message: 'at most 32 metadata keys' });
const FORMAT = z.enum(DOCUMENT_FORMATS);

const collectionCreate = z.strictObject({
  name: NAME,
  realm: REALM.default(DEFAULT_REALM),
  description: safeText(z.string().max(2000)).nullish(),
  embedding_model: z.string().trim().min(1).max(200).optional(),
  dimension: z.number().int().min(8).max(4096).optional(),
  chunk_target_chars: z.number().int().min(200).max(8000).optional(),
  chunk_overlap_chars: z.number().int().min(0).max(4000).optional(),
  source_id: z.string().min(1).max(100).optional(),
});
const collectionSchema = z.object({
  ...storedSchema,
  name: z.string(),
  realm: z.string(),
  description: z.string().nullable(),
  embedding_model: z.string(),
  dimension: z.number(),
  chunk_target_chars: z.number(),
  chunk_overlap_chars: z.number(),
  created_by: z.string(),
  source_id: z.string().nullable(),
});
const syncSchema = z.object({
  source_id: z.string(),
  listed: z.number().int(),
  added: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  deleted: z.number().int(),
  truncated: z.boolean(),
});
const collectionQuery = pageQuery.extend({ realm: REALM.optional() });

const documentCreate = z
  .strictObject({
    name: z.string().trim().min(1).max(500).optional(),
    content: z.string().max(MAX_DOCUMENT_BYTES).optional(),
    content_base64: z
      .string()
      .max(Math.ceil((MAX_DOCUMENT_BYTES * 4) / 3) + 4)
      .optional(),
    path: z.string().min(1).max(1000).optional(),
    format: FORMAT.optional(),
    metadata: METADATA.default({}),
  })
  .refine((body) => [body.content, body.content_base64, body.path].filter((value) => value !== undefined).length === 1, {
    message: 'give exactly one of content, content_base64 or path',
  })
  .refine((body) => body.path !== undefined || body.name !== undefined, { message: 'name is required with content or content_base64', path: ['name'] });
const documentSchema = z.object({
  ...storedSchema,
  collection_id: z.string(),
  realm: z.string(),
  name: z.string(),
  format: FORMAT,
  origin: z.string(),
  origin_ref: z.string().nullable(),
  content_hash: z.string(),
  size_bytes: z.number(),
  metadata: z.record(z.string(), z.string()),
  status: z.enum(RAG_DOCUMENT_STATUSES),
  reason: z.string().nullable(),
  chunk_count: z.number(),
  indexed_at: z.string().nullable(),
});
const documentQuery = pageQuery.extend({ status: z.enum(RAG_DOCUMENT_STATUSES).optional() });
const documentParams = z.object({ id: z.string().min(1).max(100), document_id: z.string().min(1).max(100) });

const searchBody = z.strictObject({
  query: z.string().trim().min(1, { message: 'query must not be empty' }).max(2000),
  collection: z.string().min(1).max(200).optional(),
  realm: REALM.optional(),
  k: z.number().int().min(1).max(MAX_SEARCH_K).default(5),
  filters: METADATA.optional(),
  mode: z.enum(['hybrid', 'vector', 'text']).default('hybrid'),
  mmr: z.boolean().default(false),
});
const searchSchema = z.object({
  items: z.array(
    z.object({
      chunk_id: z.string(),
      score: z.number(),
      vector_rank: z.number().nullable(),
      text_rank: z.number().nullable(),
      collection: z.object({ id: z.string(), name: z.string() }),
      document: z.object({ id: z.string(), name: z.string(), metadata: z.record(z.string(), z.string()) }),
      position: z.number(),
      heading_path: z.array(z.string()),
      text: z.string(),
      snippet: z.string(),
    }),
  ),
});

const presentCollection = (collection: RagCollectionDoc) => ({
  id: collection.id,
  name: collection.name,
  realm: collection.realm,
  description: collection.description,
  embedding_model: collection.embedding_model,
  dimension: collection.dimension,
  chunk_target_chars: collection.chunk_target_chars,
  chunk_overlap_chars: collection.chunk_overlap_chars,
  created_by: collection.created_by,
  source_id: collection.source_id ?? null,
  created_at: collection.created_at,
  updated_at: collection.updated_at,
});

const presentDocument = (document: RagDocumentDoc) => ({
  id: document.id,
  collection_id: document.collection_id,
  realm: document.realm,
  name: document.name,
  format: document.format,
  origin: document.origin,
  origin_ref: document.origin_ref,
  content_hash: document.content_hash,
  size_bytes: document.size_bytes,
  metadata: document.metadata,
  status: document.status,
  reason: document.reason,
  chunk_count: document.chunk_count,
  indexed_at: document.indexed_at,
  created_at: document.created_at,
  updated_at: document.updated_at,
});

export function ragRoutes({ rag, ragSearch, ragSources }: Services): AnyRoute[] {
  const listCollections = createPageResponder(rag.collectionListing, presentCollection);
  const listDocuments = createPageResponder(rag.documentListing, presentDocument);

  return [
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'GET',
      path: '/rag/collections',
      summary: 'List RAG collections (filter: realm)',
      permission: 'rag:read',
      query: collectionQuery,
      response: pageSchema(collectionSchema),
      handler: async ({ auth, query }) => listCollections(auth.orgId, query, query.realm === undefined ? undefined : { realm: query.realm }),
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'POST',
      path: '/rag/collections',
      summary: 'Create a RAG collection (embedding model and dimension fixed from now on)',
      permission: 'rag:manage',
      body: collectionCreate,
      response: collectionSchema,
      status: 201,
      creates: true,
      errors: [422, 503],
      handler: async ({ auth, body }) => {
        if (body.source_id !== undefined) await ragSources.requireFeed(auth.orgId, body.source_id);
        return { status: 201, json: presentCollection(await rag.createCollection(auth.orgId, auth.userId, body)) };
      },
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'POST',
      path: '/rag/collections/:id/sync',
      summary:
        'Sync a collection from its source: fetches the documents whose version changed, re-indexes those whose content hash changed, deletes those gone; counts added, updated, unchanged, deleted',
      permission: 'rag:manage',
      params: idParams,
      response: syncSchema,
      errors: [409, 422],
      handler: async ({ auth, params }) => ({ status: 200, json: await ragSources.sync(auth.orgId, params.id) }),
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'GET',
      path: '/rag/collections/:id',
      summary: 'Get a RAG collection',
      permission: 'rag:read',
      params: idParams,
      response: collectionSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: presentCollection(await rag.getCollection(auth.orgId, params.id)) }),
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'DELETE',
      path: '/rag/collections/:id',
      summary: 'Delete a RAG collection with its documents and chunks',
      permission: 'rag:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await rag.deleteCollection(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'GET',
      path: '/rag/collections/:id/documents',
      summary: "List a collection's documents with their indexing status (filter: status)",
      permission: 'rag:read',
      params: idParams,
      query: documentQuery,
      response: pageSchema(documentSchema),
      handler: async ({ auth, params, query }) => {
        const collection = await rag.getCollection(auth.orgId, params.id);
        return listDocuments(auth.orgId, query, { collection_id: collection.id, ...(query.status === undefined ? {} : { status: query.status }) });
      },
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'POST',
      path: '/rag/collections/:id/documents',
      summary: 'Add a document (content, content_base64 or a file-store path); indexed in the background. Same name: replaced, unless its bytes are unchanged',
      permission: 'rag:manage',
      params: idParams,
      body: documentCreate,
      maxBodyBytes: Math.ceil((MAX_DOCUMENT_BYTES * 4) / 3) + 64 * 1024,
      response: documentSchema,
      responses: { 200: documentSchema },
      status: 202,
      creates: true,
      handler: async ({ auth, params, body }) => {
        let added;
        if (body.path !== undefined) {
          added = await rag.addFile(auth.orgId, params.id, body.path, body.metadata, body.format);
        } else {
          const bytes = body.content !== undefined ? Buffer.from(body.content, 'utf8') : Buffer.from(body.content_base64 ?? '', 'base64');
          if (bytes.byteLength > MAX_DOCUMENT_BYTES)
            throw new ServiceError('payload_too_large', `a document is at most ${MAX_DOCUMENT_BYTES} bytes`, { limit: MAX_DOCUMENT_BYTES });
          added = await rag.addDocument(auth.orgId, params.id, { name: body.name ?? '', bytes, format: body.format, metadata: body.metadata });
        }
        return { status: added.unchanged ? 200 : 202, json: presentDocument(added.document) };
      },
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'GET',
      path: '/rag/collections/:id/documents/:document_id',
      summary: 'Get a document and its indexing status',
      permission: 'rag:read',
      params: documentParams,
      response: documentSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: presentDocument(await rag.getDocument(auth.orgId, params.id, params.document_id)) }),
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'DELETE',
      path: '/rag/collections/:id/documents/:document_id',
      summary: 'Delete a document and its chunks',
      permission: 'rag:manage',
      params: documentParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await rag.deleteDocument(auth.orgId, params.id, params.document_id);
        return { status: 204, json: null };
      },
    }),
    route({
      tag: 'rag',
      auth: 'bearer',
      feature: 'rag',
      method: 'POST',
      path: '/rag/search',
      summary: 'Hybrid search (vector + BM25, reciprocal rank fusion, optional MMR) over a collection or every collection of a realm',
      permission: 'rag:read',
      body: searchBody,
      response: searchSchema,
      audit: false,
      errors: [422, 503],
      handler: async ({ auth, body }) => ({ status: 200, json: { items: await ragSearch.search(auth.orgId, body) } }),
    }),
  ];
}
