/**
 * Exact cosine search over one collection's chunk vectors, held in memory as
 * one row-major matrix of unit vectors (built from the chunk store when
 * first searched after a change). The scan runs in WebAssembly SIMD
 * (simd-dot.ts): measured at 100k vectors x 256 dimensions on the 2-core
 * machine, a JavaScript loop took ~43 ms a query, DuckDB's
 * `array_cosine_distance` over a FLOAT[256] column ~120 ms, the SIMD scan a
 * few ms (bench/rag.bench.ts); from 4096 rows an int8 scan picks candidates that are then scored
 * exactly (a quarter of the memory read). Exact scores, so recall is that of the embeddings (unless
 * a true top result falls outside the int8 scan's 8k candidates);
 * filtered queries skip excluded chunks at selection. Top-k is kept with a
 * small bounded selection, not a full sort.
 */
import { Int8Matrix, SIMD_AVAILABLE, SimdMatrix } from './simd-dot.js';

/**
 * From this many rows the scan reads int8 copies of the vectors (a quarter of the bytes: the float
 * scan is bound by memory, ~19 ms at 100k x 256 here) and only its best candidates are scored again
 * exactly: the answer is the exact scores of those, in exact order.
 */
const INT8_MIN_ROWS = 4096;
/** candidates scored exactly: at least this many, and 8 per result asked */
const MIN_CANDIDATES = 64;
const CANDIDATES_PER_RESULT = 8;

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
    /** the rows in WebAssembly memory, or (no SIMD, or an int8 scan) a plain row-major array */
    private readonly simd: SimdMatrix | null,
    private readonly data: Float32Array,
    /** int8 copies of the rows, for large matrices */
    private readonly int8: Int8Matrix | null,
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
    const int8 = SIMD_AVAILABLE && rows.length >= INT8_MIN_ROWS ? new Int8Matrix(rows.length, dimension) : null;
    const simd = SIMD_AVAILABLE && int8 === null ? new SimdMatrix(rows.length, dimension) : null;
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
      int8?.set(index, row.vector);
    });
    return new VectorMatrix(dimension, rowIds, ordinals, documents, simd, data, int8);
  }

  /** every row's dot product with `query` */
  private scores(query: Float32Array): Float32Array {
    if (this.simd !== null) return this.simd.scan(query);
    const scores = new Float32Array(this.rowIds.length);
    for (let row = 0; row < scores.length; row++) scores[row] = this.exact(row, query);
    return scores;
  }

  /** one row's dot product with `query`, from the float rows */
  private exact(row: number, query: Float32Array): number {
    const { dimension, data } = this;
    let dot = 0;
    for (let index = 0, offset = row * dimension; index < dimension; index++) dot += (data[offset + index] as number) * (query[index] as number);
    return dot;
  }

  /** the best rows by the int8 scan, scored again exactly, best first */
  private rescored(query: Float32Array, k: number, allowed: ((row: number) => boolean) | null, int8: Int8Matrix): ReturnType<typeof topK> {
    const candidates = topK(int8.scan(query), Math.max(MIN_CANDIDATES, k * CANDIDATES_PER_RESULT), allowed);
    if (candidates.count === 0) return candidates;
    const exact = new Float32Array(this.rowIds.length).fill(-Infinity);
    for (let index = 0; index < candidates.count; index++) {
      const row = candidates.rows[index] as number;
      exact[row] = this.exact(row, query);
    }
    return topK(exact, Math.min(k, candidates.count), null);
  }

  /**
   * The `k` rows most similar to `query` (unit length), best first.
   * @param allowDocuments when given, only rows of these documents count
   */
  search(query: Float32Array, k: number, allowDocuments?: ReadonlySet<string>): VectorHit[] {
    if (k <= 0 || this.rowIds.length === 0) return [];
    const allowed = allowDocuments === undefined ? null : new Uint8Array(this.documents.map((id) => (allowDocuments.has(id) ? 1 : 0)));
    const ordinals = this.docOrdinals;
    const allow = allowed === null ? null : (row: number) => allowed[ordinals[row] as number] === 1;
    const top = this.int8 !== null ? this.rescored(query, k, allow, this.int8) : topK(this.scores(query), k, allow);
    const hits: VectorHit[] = [];
    for (let index = 0; index < top.count; index++) {
      hits.push({ rowId: this.rowIds[top.rows[index] as number] as number, score: top.scores[index] as number });
    }
    return hits;
  }
}
