/**
 * Exact cosine search over one collection's chunk vectors, held in memory as
 * one row-major matrix of unit vectors (built from the chunk store when
 * first searched after a change). The scan runs in WebAssembly SIMD
 * (simd-dot.ts): measured at 100k vectors x 256 dimensions on the 2-core
 * machine, a JavaScript loop took ~43 ms a query, DuckDB's
 * `array_cosine_distance` over a FLOAT[256] column ~120 ms, the SIMD scan a
 * few ms (bench/rag.bench.ts). Exact, so recall is that of the embeddings;
 * filtered queries skip excluded chunks at selection. Top-k is kept with a
 * small bounded selection, not a full sort.
 */
import { SIMD_AVAILABLE, SimdMatrix } from './simd-dot.js';

export interface VectorHit {
  /** the chunk's row id in the chunk store */
  readonly rowId: number;
  /** cosine similarity in [-1, 1] */
  readonly score: number;
}

/** Scales `vector` to unit length in place (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let index = 0; index < vector.length; index++) sum += (vector[index] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let index = 0; index < vector.length; index++) vector[index] = (vector[index] as number) / norm;
  return vector;
}

/** The `k` best of `scores` (rows `allowed` refuses skipped), best first. */
export function topK(scores: Float32Array, k: number, allowed: ((row: number) => boolean) | null): { rows: Int32Array; scores: Float32Array; count: number } {
  const topScores = new Float32Array(k).fill(-Infinity);
  const topRows = new Int32Array(k).fill(-1);
  let floor = -Infinity;
  let count = 0;
  for (let row = 0; row < scores.length; row++) {
    const score = scores[row] as number;
    if (score <= floor) continue;
    if (allowed !== null && !allowed(row)) continue;
    // insert into the sorted top-k (descending), dropping the last
    let at = Math.min(count, k - 1);
    while (at > 0 && (topScores[at - 1] as number) < score) {
      topScores[at] = topScores[at - 1] as number;
      topRows[at] = topRows[at - 1] as number;
      at -= 1;
    }
    topScores[at] = score;
    topRows[at] = row;
    if (count < k) count += 1;
    if (count === k) floor = topScores[k - 1] as number;
  }
  return { rows: topRows, scores: topScores, count };
}

export class VectorMatrix {
  private constructor(
    readonly dimension: number,
    private readonly rowIds: Float64Array,
    /** per row: the ordinal of its document in `documents` */
    private readonly docOrdinals: Int32Array,
    readonly documents: readonly string[],
    /** the rows in WebAssembly memory, or (no SIMD) a plain row-major array */
    private readonly simd: SimdMatrix | null,
    private readonly data: Float32Array,
  ) {}

  get size(): number {
    return this.rowIds.length;
  }

  /** `rows` in any order; each vector must already be unit length and of `dimension` */
  static build(dimension: number, rows: readonly { rowId: number; documentId: string; vector: Float32Array }[]): VectorMatrix {
    const documents: string[] = [];
    const ordinalOf = new Map<string, number>();
    const rowIds = new Float64Array(rows.length);
    const ordinals = new Int32Array(rows.length);
    const simd = SIMD_AVAILABLE ? new SimdMatrix(rows.length, dimension) : null;
    const stride = simd?.stride ?? dimension;
    const data = simd?.data ?? new Float32Array(rows.length * dimension);
    rows.forEach((row, index) => {
      let ordinal = ordinalOf.get(row.documentId);
      if (ordinal === undefined) {
        ordinal = documents.length;
        documents.push(row.documentId);
        ordinalOf.set(row.documentId, ordinal);
      }
      rowIds[index] = row.rowId;
      ordinals[index] = ordinal;
      data.set(row.vector.subarray(0, dimension), index * stride);
    });
    return new VectorMatrix(dimension, rowIds, ordinals, documents, simd, data);
  }

  /** every row's dot product with `query` */
  private scores(query: Float32Array): Float32Array {
    if (this.simd !== null) return this.simd.scan(query);
    const dimension = this.dimension;
    const data = this.data;
    const scores = new Float32Array(this.rowIds.length);
    for (let row = 0, offset = 0; row < scores.length; row++, offset += dimension) {
      let dot = 0;
      for (let index = 0; index < dimension; index++) dot += (data[offset + index] as number) * (query[index] as number);
      scores[row] = dot;
    }
    return scores;
  }

  /**
   * The `k` rows most similar to `query` (unit length), best first.
   * @param allowDocuments when given, only rows of these documents count
   */
  search(query: Float32Array, k: number, allowDocuments?: ReadonlySet<string>): VectorHit[] {
    if (k <= 0 || this.rowIds.length === 0) return [];
    const allowed = allowDocuments === undefined ? null : new Uint8Array(this.documents.map((id) => (allowDocuments.has(id) ? 1 : 0)));
    const ordinals = this.docOrdinals;
    const top = topK(this.scores(query), k, allowed === null ? null : (row) => allowed[ordinals[row] as number] === 1);
    const hits: VectorHit[] = [];
    for (let index = 0; index < top.count; index++) {
      hits.push({ rowId: this.rowIds[top.rows[index] as number] as number, score: top.scores[index] as number });
    }
    return hits;
  }
}
