/**
 * `npm run bench:rag`: retrieval quality and speed of the RAG engine
 * (runtime/rag: chunking, the SQLite chunk store with its in-memory BM25 and SIMD vector indexes,
 * RRF fusion), with the fake embeddings' deterministic hashed bag-of-words
 * vectors (test/fakes/embeddings/vectors.ts; no model weights).
 *
 * Quality: the READMEs npm packages ship in node_modules are the passages;
 * test/fixtures/rag/readme-questions.json holds the questions and, per
 * question, the answer string marking its relevant chunks. Reports recall@5
 * and MRR@10 for BM25 alone, vectors alone and hybrid (RRF).
 * Speed: indexing throughput (chunk + embed + store, chunks/s) and hybrid
 * query latency p50/p99 with the collection padded to 100k chunks (20k with
 * --quick). Targets: query p50 < 20 ms at 100k chunks; hybrid recall@5 >= BM25's.
 * Baseline, same run: the plain JavaScript cosine scan the vector index used
 * before its WebAssembly SIMD scan (`baseline_js_scan_mean_ms`, ratio
 * `vector_speedup`). `query_cpu_mean_ms` is the process CPU time per hybrid
 * query: on a shared machine it moves less than wall-clock latency.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEmbedding } from '../test/fakes/embeddings/vectors.js';
import { chunkDocument, type Chunk } from '../runtime/rag/chunking.js';
import { ChunkStore } from '../runtime/rag/chunk-store.js';
import { reciprocalRankFusion } from '../runtime/rag/fusion.js';
import { QUICK, ROOT, printSummary } from './lib.js';

const DIMENSION = Number(process.env['RAG_BENCH_DIMENSION'] ?? 256);
const TOTAL_CHUNKS = QUICK ? 20_000 : 100_000;
const QUERIES = QUICK ? 100 : 300;
const ORG = 'org_bench';
const COLLECTION = 'rcol_bench';

interface Question {
  readonly package: string;
  readonly question: string;
  readonly answer: string;
}

const fixture = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/rag/readme-questions.json'), 'utf8')) as { questions: Question[] };
const packages = [...new Set(fixture.questions.map((question) => question.package))];
const store = new ChunkStore(':memory:');
const vector = (text: string): Float32Array => Float32Array.from(fakeEmbedding(text, DIMENSION));
const embedText = (chunk: Chunk): string => (chunk.heading_path.length > 0 ? `${chunk.heading_path.join(' / ')}\n${chunk.text}` : chunk.text);

// quality corpus: every README, chunked as a collection with target 600 / overlap 80 would be
const relevant = new Map<string, Set<number>>();
let indexed = 0;
const indexStart = performance.now();
for (const name of packages) {
  const chunks = chunkDocument(readFileSync(join(ROOT, 'node_modules', name, 'README.md'), 'utf8'), true, { targetChars: 600, overlapChars: 80 });
  store.replaceDocument(
    ORG,
    COLLECTION,
    `doc_${name}`,
    chunks,
    chunks.map((chunk) => vector(embedText(chunk))),
  );
  indexed += chunks.length;
}
const readmeChunks = indexed;
// the row ids of each README's chunks that hold an answer string
const allRows = store.chunks(
  ORG,
  Array.from({ length: readmeChunks }, (_, index) => index + 1),
);
for (const question of fixture.questions) {
  const rows = [...allRows.values()]
    .filter((chunk) => chunk.documentId === `doc_${question.package}` && chunk.text.includes(question.answer))
    .map((chunk) => chunk.rowId);
  relevant.set(question.question, new Set(rows));
}

function quality(rank: (query: string) => number[]): { recall_at_5: number; mrr_at_10: number } {
  let hits = 0;
  let reciprocal = 0;
  let counted = 0;
  for (const question of fixture.questions) {
    const wanted = relevant.get(question.question);
    if (wanted === undefined || wanted.size === 0) continue;
    counted += 1;
    const ranked = rank(question.question).slice(0, 10);
    const first = ranked.findIndex((rowId) => wanted.has(rowId));
    if (first >= 0 && first < 5) hits += 1;
    if (first >= 0) reciprocal += 1 / (first + 1);
  }
  return { recall_at_5: Number((hits / counted).toFixed(3)), mrr_at_10: Number((reciprocal / counted).toFixed(3)) };
}

const bm25 = (query: string): number[] => store.searchText(ORG, COLLECTION, query, 40).map((hit) => hit.rowId);
const dense = (query: string): number[] => store.searchVectors(ORG, COLLECTION, DIMENSION, vector(query), 40).map((hit) => hit.rowId);
const hybrid = (query: string): number[] => reciprocalRankFusion(dense(query), bm25(query)).map((hit) => hit.rowId);
const qualityBm25 = quality(bm25);
const qualityVector = quality(dense);
const qualityHybrid = quality(hybrid);

// the vectors as the baseline JavaScript scan holds them (row-major, unit length)
const baselineRows: Float32Array[] = [];
// speed: pad the collection with documents of README words until it holds TOTAL_CHUNKS chunks
const vocabulary = [...new Set([...allRows.values()].flatMap((chunk) => chunk.text.toLowerCase().match(/[a-z]{3,}/g) ?? []))];
let seed = 42;
const random = (): number => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
  return seed / 2 ** 32;
};
const paragraph = (): string => Array.from({ length: 60 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ') + '.';
let padDoc = 0;
while (indexed < TOTAL_CHUNKS) {
  const text = Array.from({ length: 40 }, paragraph).join('\n\n');
  const chunks = chunkDocument(text, false, { targetChars: 600, overlapChars: 80 });
  store.replaceDocument(
    ORG,
    COLLECTION,
    `pad_${padDoc++}`,
    chunks,
    chunks.map((chunk) => {
      const padded = vector(chunk.text);
      if (baselineRows.length < TOTAL_CHUNKS) baselineRows.push(padded);
      return padded;
    }),
  );
  indexed += chunks.length;
}
const indexSeconds = (performance.now() - indexStart) / 1000;

// the first search builds the in-memory indexes (BM25 and vectors); measured apart
const warmStart = performance.now();
hybrid('warm up the indexes');
const matrixBuildMs = performance.now() - warmStart;
const latencies: number[] = [];
const cpuStart = process.cpuUsage();
for (let index = 0; index < QUERIES; index++) {
  const question = fixture.questions[index % fixture.questions.length] as Question;
  const start = performance.now();
  const fused = hybrid(question.question).slice(0, 5);
  store.chunks(ORG, fused);
  latencies.push(performance.now() - start);
}
const cpu = process.cpuUsage(cpuStart);
latencies.sort((a, b) => a - b);
// baseline: the former plain JavaScript scan over the same number of vectors
const baselineMatrix = new Float32Array(baselineRows.length * DIMENSION);
baselineRows.forEach((row, index) => baselineMatrix.set(row, index * DIMENSION));
baselineRows.length = 0;
let baselineMs = 0;
for (const question of fixture.questions) {
  const query = vector(question.question);
  const start = performance.now();
  let best = -Infinity;
  for (let offset = 0; offset < baselineMatrix.length; offset += DIMENSION) {
    let dot = 0;
    for (let index = 0; index < DIMENSION; index++) dot += (baselineMatrix[offset + index] as number) * (query[index] as number);
    if (dot > best) best = dot;
  }
  baselineMs += performance.now() - start;
}
const split = { vector: 0, text: 0 };
for (const question of fixture.questions) {
  let start = performance.now();
  dense(question.question);
  split.vector += performance.now() - start;
  start = performance.now();
  bm25(question.question);
  split.text += performance.now() - start;
}
const at = (quantile: number): number => Number((latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))] ?? 0).toFixed(2));
const afterQuality = quality(hybrid);
store.close();

console.log(`readme chunks ${readmeChunks}, questions ${fixture.questions.length}, padded to ${indexed} chunks, dimension ${DIMENSION}`);
console.log(
  `bm25 ${JSON.stringify(qualityBm25)} vector ${JSON.stringify(qualityVector)} hybrid ${JSON.stringify(qualityHybrid)} hybrid among ${indexed}: ${JSON.stringify(afterQuality)}`,
);
printSummary({
  bench: 'rag',
  quick: QUICK,
  chunks: indexed,
  dimension: DIMENSION,
  questions: fixture.questions.length,
  bm25_recall_at_5: qualityBm25.recall_at_5,
  bm25_mrr_at_10: qualityBm25.mrr_at_10,
  vector_recall_at_5: qualityVector.recall_at_5,
  vector_mrr_at_10: qualityVector.mrr_at_10,
  hybrid_recall_at_5: qualityHybrid.recall_at_5,
  hybrid_mrr_at_10: qualityHybrid.mrr_at_10,
  hybrid_recall_at_5_padded: afterQuality.recall_at_5,
  index_chunks_per_s: Math.round(indexed / indexSeconds),
  index_build_ms: Math.round(matrixBuildMs),
  query_p50_ms: at(0.5),
  query_p99_ms: at(0.99),
  query_cpu_mean_ms: Number(((cpu.user + cpu.system) / 1000 / QUERIES).toFixed(2)),
  vector_mean_ms: Number((split.vector / fixture.questions.length).toFixed(2)),
  baseline_js_scan_mean_ms: Number((baselineMs / fixture.questions.length).toFixed(2)),
  vector_speedup: Number((baselineMs / Math.max(split.vector, 0.001)).toFixed(1)),
  bm25_mean_ms: Number((split.text / fixture.questions.length).toFixed(2)),
});
