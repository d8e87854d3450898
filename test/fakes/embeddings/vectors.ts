/**
 * Deterministic embeddings without model weights: a hashed bag of words.
 * Each lower-cased word (a plural `s` dropped) adds 1 to the component its
 * FNV-1a hash picks, with a sign from another hash bit; the vector is scaled
 * to unit length. Texts sharing words are close in cosine, unrelated texts
 * are near orthogonal, and the same text always gets the same vector.
 */

/** the dimension of a model named `...-<n>` (e.g. `fake-embed-64`), else 256 */
export function dimensionOfModel(model: string): number {
  const match = /-(\d{1,4})$/.exec(model);
  const dimension = match ? Number(match[1]) : 256;
  return dimension >= 2 && dimension <= 4096 ? dimension : 256;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

const STOP = new Set(['the', 'a', 'an', 'of', 'to', 'and', 'or', 'in', 'on', 'is', 'are', 'it', 'for', 'with', 'what', 'how', 'do', 'i', 'when', 'be']);

export function fakeEmbedding(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP.has(raw)) continue;
    const word = raw.length > 3 && raw.endsWith('s') ? raw.slice(0, -1) : raw;
    const hash = fnv1a(word);
    const index = hash % dimension;
    vector[index] = (vector[index] ?? 0) + ((hash >>> 31) & 1 ? -1 : 1);
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}
