/**
 * Hybrid retrieval (`POST /rag/search` and the `rag.search` tool): in each
 * collection searched, the query's vector neighbours and its BM25 hits are
 * fused by reciprocal rank; across collections the fused lists are merged by
 * score; an optional MMR pass diversifies the top. Metadata filters select
 * documents by exact value before either list is ranked.
 */
import type { Collections } from '../collections.js';
import type { RagCollectionDoc, RagDocumentDoc } from './documents.js';
import type { Embedders } from './embedder.js';
import { ragErrorOf } from './errors.js';
import { ServiceError } from '../../runtime/errors.js';
import type { ChunkStore } from '../../runtime/rag/chunk-store.js';
import { maximalMarginalRelevance, reciprocalRankFusion } from '../../runtime/rag/fusion.js';
import type { OrgId } from '../../runtime/store/types.js';

export const MAX_SEARCH_K = 50;
/** each list ranks this many candidates per result asked for (at least 20) */
const CANDIDATES_PER_RESULT = 4;
const SNIPPET_CHARS = 300;

type SearchMode = 'hybrid' | 'vector' | 'text';

export interface SearchQuery {
  readonly query: string;
  /** a collection id or name; absent: every collection of `realm` */
  readonly collection?: string | undefined;
  readonly realm?: string | undefined;
  readonly k: number;
  /** document metadata that must match exactly */
  readonly filters?: Record<string, string> | undefined;
  readonly mode?: SearchMode | undefined;
  readonly mmr?: boolean | undefined;
}

export interface SearchResult {
  readonly chunk_id: string;
  readonly score: number;
  readonly vector_rank: number | null;
  readonly text_rank: number | null;
  readonly collection: { readonly id: string; readonly name: string };
  readonly document: { readonly id: string; readonly name: string; readonly metadata: Record<string, string> };
  readonly position: number;
  readonly heading_path: readonly string[];
  readonly text: string;
  readonly snippet: string;
}

/** the sentence-ish window of `text` around the first query word it holds */
function snippetOf(text: string, query: string): string {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const lower = text.toLowerCase();
  const at = words.map((word) => lower.indexOf(word)).filter((index) => index >= 0);
  const start = at.length === 0 ? 0 : Math.max(0, Math.min(...at) - SNIPPET_CHARS / 3);
  const slice = text
    .slice(start, start + SNIPPET_CHARS)
    .replace(/\s+/g, ' ')
    .trim();
  return `${start > 0 ? '…' : ''}${slice}${start + SNIPPET_CHARS < text.length ? '…' : ''}`;
}

export class RagSearch {
  constructor(
    private readonly collections: Pick<Collections, 'ragCollections' | 'ragDocuments' | 'realms'>,
    private readonly chunks: ChunkStore,
    private readonly embedders: Embedders,
  ) {}

  private async targets(org: OrgId, query: SearchQuery): Promise<RagCollectionDoc[]> {
    if (query.collection !== undefined) {
      const collection =
        (await this.collections.ragCollections.get(org, query.collection)) ?? (await this.collections.ragCollections.findOne(org, { name: query.collection }));
      if (collection === null || (query.realm !== undefined && collection.realm !== query.realm))
        throw new ServiceError('not_found', `collection ${query.collection} not found`);
      return [collection];
    }
    const realm = query.realm ?? 'default';
    if (!(await this.collections.realms.findOne(org, { name: realm })))
      throw new ServiceError('validation_error', `invalid realm: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    return this.collections.ragCollections.findAll(org, { realm });
  }

  async search(org: OrgId, query: SearchQuery): Promise<SearchResult[]> {
    const mode = query.mode ?? 'hybrid';
    const candidates = Math.max(20, query.k * CANDIDATES_PER_RESULT);
    const merged: { rowId: number; score: number; vectorRank: number | null; textRank: number | null; collection: RagCollectionDoc }[] = [];
    const vectorsByModel = new Map<string, Float32Array>();
    for (const collection of await this.targets(org, query)) {
      let allow: Set<string> | undefined;
      const filters = Object.entries(query.filters ?? {});
      if (filters.length > 0) {
        const documents = await this.collections.ragDocuments.findAll(org, { collection_id: collection.id, status: 'ready' });
        allow = new Set(documents.filter((document) => filters.every(([key, value]) => document.metadata[key] === value)).map((document) => document.id));
        if (allow.size === 0) continue;
      }
      let vectorRows: number[] = [];
      if (mode !== 'text') {
        const key = `${collection.embedding_model}\u0000${collection.dimension}`;
        let vector = vectorsByModel.get(key);
        if (vector === undefined) {
          try {
            const client = await this.embedders.client(org, collection.embedding_model);
            [vector] = await client.embed([query.query], { dimension: collection.dimension });
          } catch (error) {
            throw ragErrorOf(error);
          }
          if (vector === undefined) continue;
          vectorsByModel.set(key, vector);
        }
        vectorRows = this.chunks.searchVectors(org, collection.id, collection.dimension, vector, candidates, allow).map((hit) => hit.rowId);
      }
      const textRows = mode === 'vector' ? [] : this.chunks.searchText(org, collection.id, query.query, candidates, allow).map((hit) => hit.rowId);
      for (const hit of reciprocalRankFusion(vectorRows, textRows)) merged.push({ ...hit, collection });
    }
    merged.sort((a, b) => b.score - a.score);
    const pool = merged.slice(0, query.mmr === true ? query.k * 3 : query.k);
    const stored = this.chunks.chunks(
      org,
      pool.map((hit) => hit.rowId),
    );
    const documentIds = [...new Set([...stored.values()].map((chunk) => chunk.documentId))];
    const documents = new Map<string, RagDocumentDoc>();
    for (const id of documentIds) {
      const document = await this.collections.ragDocuments.get(org, id);
      if (document !== null) documents.set(id, document);
    }
    const results: SearchResult[] = [];
    for (const hit of pool) {
      const chunk = stored.get(hit.rowId);
      const document = chunk === undefined ? undefined : documents.get(chunk.documentId);
      if (chunk === undefined || document === undefined) continue;
      results.push({
        chunk_id: `chk_${hit.rowId}`,
        score: hit.score,
        vector_rank: hit.vectorRank,
        text_rank: hit.textRank,
        collection: { id: hit.collection.id, name: hit.collection.name },
        document: { id: document.id, name: document.name, metadata: document.metadata },
        position: chunk.position,
        heading_path: chunk.headingPath,
        text: chunk.text,
        snippet: snippetOf(chunk.text, query.query),
      });
    }
    return query.mmr === true ? maximalMarginalRelevance(results, query.k) : results;
  }
}
