/**
 * Hybrid ranking: reciprocal rank fusion of the vector and BM25 lists
 * (Cormack et al. 2009, `1 / (k + rank)` with k = 60 summed over the lists a
 * chunk is in), and an optional maximal marginal relevance pass that trades
 * relevance for diversity, with word-set overlap (Jaccard) as the similarity
 * between two chunks.
 */

/** the RRF constant of the original paper */
const RRF_K = 60;

export interface FusedHit {
  readonly rowId: number;
  /** the fused score: the sum of 1 / (RRF_K + rank) */
  readonly score: number;
  /** 1-based rank in the vector list, when it is in it */
  readonly vectorRank: number | null;
  /** 1-based rank in the BM25 list, when it is in it */
  readonly textRank: number | null;
}

/** Fuses ranked lists of row ids (best first), best fused score first; ties keep the vector list's order. */
export function reciprocalRankFusion(vector: readonly number[], text: readonly number[]): FusedHit[] {
  const fused = new Map<number, { score: number; vectorRank: number | null; textRank: number | null; order: number }>();
  const add = (rows: readonly number[], which: 'vectorRank' | 'textRank'): void => {
    rows.forEach((rowId, index) => {
      const entry = fused.get(rowId) ?? { score: 0, vectorRank: null, textRank: null, order: fused.size };
      entry.score += 1 / (RRF_K + index + 1);
      entry[which] = index + 1;
      fused.set(rowId, entry);
    });
  };
  add(vector, 'vectorRank');
  add(text, 'textRank');
  return [...fused.entries()]
    .sort(([, a], [, b]) => b.score - a.score || a.order - b.order)
    .map(([rowId, entry]) => ({ rowId, score: entry.score, vectorRank: entry.vectorRank, textRank: entry.textRank }));
}

const wordsOf = (text: string): Set<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/**
 * Picks `k` of `candidates` (best first) by MMR: each step takes the one with
 * the highest `lambda * relevance - (1 - lambda) * max similarity to those taken`,
 * relevance being the candidate's score scaled to [0, 1].
 */
export function maximalMarginalRelevance<T extends { readonly score: number; readonly text: string }>(candidates: readonly T[], k: number, lambda = 0.7): T[] {
  if (candidates.length <= 1) return candidates.slice(0, k);
  const top = Math.max(...candidates.map((candidate) => candidate.score));
  const bottom = Math.min(...candidates.map((candidate) => candidate.score));
  const spread = top - bottom || 1;
  const pool = candidates.map((candidate) => ({ candidate, relevance: (candidate.score - bottom) / spread, words: wordsOf(candidate.text) }));
  const taken: typeof pool = [];
  while (taken.length < k && pool.length > 0) {
    let best = 0;
    let bestValue = -Infinity;
    pool.forEach((entry, index) => {
      const similarity = taken.reduce((max, chosen) => Math.max(max, jaccard(entry.words, chosen.words)), 0);
      const value = lambda * entry.relevance - (1 - lambda) * similarity;
      if (value > bestValue) {
        bestValue = value;
        best = index;
      }
    });
    taken.push(...pool.splice(best, 1));
  }
  return taken.map((entry) => entry.candidate);
}
