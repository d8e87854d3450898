/**
 * How memory entries are recalled, shared by `POST /memory/recall` and the
 * `memory.recall` tool so both rank the same way: the store's full-text
 * relevance weighted by importance.
 */
import type { MemoryDoc, MemoryKind } from './documents.js';
import type { Filter, OrgCollection, OrgId } from '../../runtime/store/types.js';

/** the most entries one recall answers (REST and tool) */
export const MAX_RECALL_LIMIT = 50;

/** recall ranks more text hits than it returns, so importance can lift an entry into the top `limit` */
const RECALL_CANDIDATES_PER_RESULT = 4;

/**
 * Recall score: the store's text relevance scaled by importance,
 * `score = text_score * (0.5 + importance)`. Importance 0.5 leaves relevance
 * as it is; the scale runs from 0.5x (importance 0) to 1.5x (importance 1), so
 * importance reorders entries of similar relevance without letting an
 * important but barely matching entry beat a strong match by much.
 */
const recallScore = (textScore: number, importance: number): number => textScore * (0.5 + importance);

export interface RecallQuery {
  readonly query: string;
  readonly realm?: string | undefined;
  readonly kind?: MemoryKind | undefined;
  readonly limit: number;
}

export interface RecalledMemory {
  readonly doc: MemoryDoc;
  readonly score: number;
}

/** The organization's best `limit` entries for the query, best first (ties: newest first). */
export async function recallMemories(memory: OrgCollection<MemoryDoc>, org: OrgId, query: RecallQuery): Promise<RecalledMemory[]> {
  const filter: Record<string, Filter[string]> = {};
  if (query.realm !== undefined) filter['realm'] = query.realm;
  if (query.kind !== undefined) filter['kind'] = query.kind;
  const hits = await memory.search(org, query.query, { filter, limit: query.limit * RECALL_CANDIDATES_PER_RESULT });
  return hits
    .map((hit) => ({ doc: hit.doc, score: recallScore(hit.score, hit.doc.importance) }))
    .sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? 1 : -1))
    .slice(0, query.limit);
}
