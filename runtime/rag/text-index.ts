/**
 * BM25 over one collection's chunks, held in memory as an inverted index
 * (term -> chunk ordinals and term frequencies in typed arrays), built from
 * the chunk store when first searched after a change, as the vector matrix
 * is. SQLite's FTS5 ranked the same chunks before: at 100k chunks it scored
 * every match of an OR query in ~30 ms (bench/rag.bench.ts); here a query
 * walks only its terms' postings into a score array and keeps the top k.
 *
 * Words: lower-cased Unicode letters, digits and `_`, with a light English
 * suffix stemmer (plurals, -ing, -ed, -ly) applied to both chunks and
 * queries. Headings count half as much as body text (BM25F-style weight).
 * k1 = 1.2, b = 0.75.
 */
import { topK } from './vector-index.js';

const K1 = 1.2;
const B = 0.75;
const HEADING_WEIGHT = 0.5;

// English function words: they match nearly every chunk, so they rank nothing; a query of only these keeps them
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i if in into is it its of on or should that the then this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

const isVowel = (char: string | undefined): boolean => char !== undefined && 'aeiouy'.includes(char);

/** a light English stemmer: the same word forms meet (`restarts`, `restarting`, `restarted` -> `restart`) */
export function stem(word: string): string {
  let stemmed = word;
  if (stemmed.length > 4 && stemmed.endsWith('ies')) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (stemmed.length > 4 && stemmed.endsWith('sses')) stemmed = stemmed.slice(0, -2);
  else if (stemmed.length > 3 && stemmed.endsWith('s') && !stemmed.endsWith('ss') && !stemmed.endsWith('us') && !stemmed.endsWith('is'))
    stemmed = stemmed.slice(0, -1);
  for (const suffix of ['ing', 'ed']) {
    if (stemmed.length > suffix.length + 2 && stemmed.endsWith(suffix)) {
      const base = stemmed.slice(0, -suffix.length);
      if (![...base].some(isVowel)) break;
      // running -> run, stopped -> stop
      const last = base[base.length - 1];
      stemmed = base.length > 3 && last === base[base.length - 2] && !'lsz'.includes(last ?? '') ? base.slice(0, -1) : base;
      break;
    }
  }
  if (stemmed.length > 5 && stemmed.endsWith('ly')) stemmed = stemmed.slice(0, -2);
  return stemmed;
}

const WORD = /[\p{L}\p{N}_]+/gu;

/** the stemmed words of `text`, in order */
function terms(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map(stem);
}

/** the distinct terms a query looks for: stop words dropped unless nothing else is left, at most 64 */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(WORD) ?? [];
  const content = words.filter((word) => !STOP_WORDS.has(word));
  return [...new Set((content.length > 0 ? content : words).map(stem))].slice(0, 64);
}

export interface TextRow {
  readonly rowId: number;
  readonly documentId: string;
  readonly text: string;
  readonly heading: string;
}

export interface TextHit {
  readonly rowId: number;
  /** BM25 relevance, higher is better */
  readonly score: number;
}

/** (term, row, frequency) triples in growable typed arrays */
class Entries {
  terms = new Int32Array(4096);
  rows = new Int32Array(4096);
  values = new Float32Array(4096);
  length = 0;

  push(term: number, row: number, value: number): void {
    if (this.length === this.terms.length) {
      const grow = <T extends Int32Array | Float32Array>(array: T, make: (size: number) => T): T => {
        const grown = make(array.length * 2);
        grown.set(array);
        return grown;
      };
      this.terms = grow(this.terms, (size) => new Int32Array(size));
      this.rows = grow(this.rows, (size) => new Int32Array(size));
      this.values = grow(this.values, (size) => new Float32Array(size));
    }
    this.terms[this.length] = term;
    this.rows[this.length] = row;
    this.values[this.length] = value;
    this.length += 1;
  }
}

export class TextIndex {
  private constructor(
    private readonly rowIds: Float64Array,
    private readonly docOrdinals: Int32Array,
    private readonly documents: readonly string[],
    /** per row: its weighted length in terms */
    private readonly lengths: Float32Array,
    private readonly averageLength: number,
    private readonly termIds: ReadonlyMap<string, number>,
    /** term id -> the start of its postings in `rows` / `frequencies` (CSR) */
    private readonly starts: Int32Array,
    private readonly rows: Int32Array,
    private readonly frequencies: Float32Array,
    /** reused per query (a search runs to the end before the next starts) */
    private readonly scratch: Float32Array,
  ) {}

  get size(): number {
    return this.rowIds.length;
  }

  static build(rows: readonly TextRow[]): TextIndex {
    const termIds = new Map<string, number>();
    const entries = new Entries();
    const rowIds = new Float64Array(rows.length);
    const docOrdinals = new Int32Array(rows.length);
    const documents: string[] = [];
    const ordinalOf = new Map<string, number>();
    const lengths = new Float32Array(rows.length);
    let totalLength = 0;
    const counts: number[] = [];
    rows.forEach((row, index) => {
      rowIds[index] = row.rowId;
      let ordinal = ordinalOf.get(row.documentId);
      if (ordinal === undefined) {
        ordinal = documents.length;
        documents.push(row.documentId);
        ordinalOf.set(row.documentId, ordinal);
      }
      docOrdinals[index] = ordinal;
      const frequency = new Map<number, number>();
      const add = (words: string[], weight: number): void => {
        for (const word of words) {
          let id = termIds.get(word);
          if (id === undefined) {
            id = termIds.size;
            termIds.set(word, id);
            counts.push(0);
          }
          frequency.set(id, (frequency.get(id) ?? 0) + weight);
        }
      };
      const body = terms(row.text);
      const heading = terms(row.heading);
      add(body, 1);
      add(heading, HEADING_WEIGHT);
      const length = body.length + heading.length * HEADING_WEIGHT;
      lengths[index] = length;
      totalLength += length;
      for (const [id, value] of frequency) {
        entries.push(id, index, value);
        counts[id] = (counts[id] as number) + 1;
      }
    });
    // CSR by term: starts[t]..starts[t+1]
    const starts = new Int32Array(termIds.size + 1);
    for (let id = 0; id < termIds.size; id++) starts[id + 1] = (starts[id] as number) + (counts[id] as number);
    const fill = starts.slice(0, termIds.size);
    const postingRows = new Int32Array(entries.length);
    const frequencies = new Float32Array(entries.length);
    for (let entry = 0; entry < entries.length; entry++) {
      const id = entries.terms[entry] as number;
      const at = fill[id] as number;
      postingRows[at] = entries.rows[entry] as number;
      frequencies[at] = entries.values[entry] as number;
      fill[id] = at + 1;
    }
    return new TextIndex(
      rowIds,
      docOrdinals,
      documents,
      lengths,
      rows.length === 0 ? 0 : totalLength / rows.length,
      termIds,
      starts,
      postingRows,
      frequencies,
      new Float32Array(rows.length),
    );
  }

  /**
   * The `k` rows that best match `query` by BM25, best first.
   * @param allowDocuments when given, only rows of these documents count
   */
  search(query: string, k: number, allowDocuments?: ReadonlySet<string>): TextHit[] {
    if (k <= 0 || this.rowIds.length === 0) return [];
    const scores = this.scratch;
    const touched: number[] = [];
    const total = this.rowIds.length;
    for (const term of queryTerms(query)) {
      const id = this.termIds.get(term);
      if (id === undefined) continue;
      const start = this.starts[id] as number;
      const end = this.starts[id + 1] as number;
      const idf = Math.log(1 + (total - (end - start) + 0.5) / (end - start + 0.5));
      for (let at = start; at < end; at++) {
        const row = this.rows[at] as number;
        const frequency = this.frequencies[at] as number;
        const norm = K1 * (1 - B + (B * (this.lengths[row] as number)) / this.averageLength);
        const before = scores[row] as number;
        if (before === 0) touched.push(row);
        scores[row] = before + (idf * frequency * (K1 + 1)) / (frequency + norm);
      }
    }
    const allowed = allowDocuments === undefined ? null : new Uint8Array(this.documents.map((document) => (allowDocuments.has(document) ? 1 : 0)));
    const candidates = new Float32Array(touched.length);
    touched.forEach((row, index) => {
      candidates[index] = scores[row] as number;
      scores[row] = 0;
    });
    const ordinals = this.docOrdinals;
    const top = topK(candidates, k, allowed === null ? null : (index) => allowed[ordinals[touched[index] as number] as number] === 1);
    const hits: TextHit[] = [];
    for (let index = 0; index < top.count; index++) {
      hits.push({ rowId: this.rowIds[touched[top.rows[index] as number] as number] as number, score: top.scores[index] as number });
    }
    return hits;
  }
}
