/**
 * The in-memory indexes the chunk store searches: the WebAssembly SIMD scan
 * scores exactly what a plain dot product does, the int8 scan within 1e-2 and a
 * large matrix's answer (int8 candidates scored again) equals an exact scan's, filters skip excluded
 * documents, BM25 ranks rarer and repeated terms higher, and a store reopened
 * on the same file answers the same (the indexes are rebuilt from its rows).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../runtime/rag/chunk-store.js';
import { Int8Matrix, SIMD_AVAILABLE, SimdMatrix } from '../../runtime/rag/simd-dot.js';
import { queryTerms, stem, TextIndex } from '../../runtime/rag/text-index.js';
import { normalize, VectorMatrix } from '../../runtime/rag/vector-index.js';

let seed = 7;
const random = (): number => {
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
  return seed / 2 ** 32 - 0.5;
};
const randomVector = (dimension: number): Float32Array => normalize(Float32Array.from({ length: dimension }, random));

describe('rag indexes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rag-indexes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('scans with SIMD exactly as a dot product, for a dimension not a multiple of 4', () => {
    expect(SIMD_AVAILABLE).toBe(true);
    const dimension = 37;
    const rows = Array.from({ length: 50 }, () => randomVector(dimension));
    const matrix = new SimdMatrix(rows.length, dimension);
    rows.forEach((row, index) => matrix.data.set(row, index * matrix.stride));
    const query = randomVector(dimension);
    const scores = matrix.scan(query);
    rows.forEach((row, index) => {
      const dot = row.reduce((sum, value, component) => sum + value * (query[component] as number), 0);
      expect(scores[index]).toBeCloseTo(dot, 5);
    });
  });

  it('finds the nearest vectors, best first, and skips documents a filter excludes', () => {
    const dimension = 16;
    const rows = Array.from({ length: 200 }, (_, index) => ({ rowId: index + 1, documentId: `doc_${index % 4}`, vector: randomVector(dimension) }));
    const matrix = VectorMatrix.build(dimension, rows);
    const query = Float32Array.from(rows[41]!.vector);
    const hits = matrix.search(query, 5);
    expect(hits[0]).toMatchObject({ rowId: 42 });
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    const filtered = matrix.search(query, 5, new Set(['doc_0']));
    expect(filtered).toHaveLength(5);
    expect(filtered.every((hit) => (hit.rowId - 1) % 4 === 0)).toBe(true);
    expect(matrix.search(query, 500)).toHaveLength(200);
  });

  it('approximates dot products with the int8 scan within 1e-2, for a dimension not a multiple of 16', () => {
    const dimension = 37;
    const rows = Array.from({ length: 50 }, () => randomVector(dimension));
    const matrix = new Int8Matrix(rows.length, dimension);
    rows.forEach((row, index) => matrix.set(index, row));
    const query = randomVector(dimension);
    const scores = matrix.scan(query);
    rows.forEach((row, index) => {
      const dot = row.reduce((sum, value, component) => sum + value * (query[component] as number), 0);
      expect(Math.abs((scores[index] as number) - dot)).toBeLessThan(1e-2);
    });
  });

  it('answers a large matrix (int8 candidates, scored again exactly) as an exact scan does, filters included', () => {
    const dimension = 24;
    const rows = Array.from({ length: 6000 }, (_, index) => ({ rowId: index + 1, documentId: `doc_${index % 7}`, vector: randomVector(dimension) }));
    const matrix = VectorMatrix.build(dimension, rows);
    for (const probe of [0, 17, 4242]) {
      const query = normalize(Float32Array.from(rows[probe]!.vector, (value) => value + random() * 0.2));
      const exact = rows
        .map((row) => ({ rowId: row.rowId, score: row.vector.reduce((sum, value, component) => sum + value * (query[component] as number), 0) }))
        .sort((a, b) => b.score - a.score);
      const hits = matrix.search(query, 10);
      expect(hits.map((hit) => hit.rowId)).toEqual(exact.slice(0, 10).map((hit) => hit.rowId));
      hits.forEach((hit, index) => expect(hit.score).toBeCloseTo(exact[index]!.score, 5));
      const filtered = matrix.search(query, 5, new Set(['doc_3']));
      expect(filtered.map((hit) => hit.rowId)).toEqual(
        exact
          .filter((hit) => (hit.rowId - 1) % 7 === 3)
          .slice(0, 5)
          .map((hit) => hit.rowId),
      );
    }
    expect(matrix.search(Float32Array.from(rows[0]!.vector), 0)).toEqual([]);
  });

  it('ranks by BM25 over stemmed words, headings at half weight, filters by document', () => {
    expect(stem('restarts')).toBe('restart');
    expect(stem('restarting')).toBe('restart');
    expect(stem('certificates')).toBe('certificate');
    expect(queryTerms('What is the disk?')).toEqual(['disk']);
    expect(queryTerms('what is it')).toEqual(['what', 'is', 'it']);
    const index = TextIndex.build([
      { rowId: 1, documentId: 'a', text: 'the disk is full, rotate the archive', heading: 'Disk full' },
      { rowId: 2, documentId: 'b', text: 'certificates expire; cert-manager renews them', heading: 'Certificates' },
      { rowId: 3, documentId: 'b', text: 'disk disk disk', heading: '' },
      { rowId: 4, documentId: 'c', text: 'nothing relevant here', heading: '' },
    ]);
    expect(index.search('disk', 10).map((hit) => hit.rowId)).toEqual([3, 1]);
    expect(index.search('renewing certificate', 10).map((hit) => hit.rowId)).toEqual([2]);
    expect(index.search('disk', 10, new Set(['a'])).map((hit) => hit.rowId)).toEqual([1]);
    expect(index.search('zebra', 10)).toEqual([]);
  });

  it('answers the same after the store is reopened, and keeps organizations apart', () => {
    const path = join(dir, 'rag.db');
    const chunk = (text: string, position: number) => ({ text, position, heading_path: ['Runbook'] });
    const vectors = [randomVector(8), randomVector(8)];
    const first = new ChunkStore(path);
    first.replaceDocument('org_a', 'col_1', 'doc_1', [chunk('rotate the WAL archive', 0), chunk('renew the certificate', 1)], vectors);
    const before = { text: first.searchText('org_a', 'col_1', 'certificate', 5), vector: first.searchVectors('org_a', 'col_1', 8, vectors[0]!, 1) };
    expect(before.text).toHaveLength(1);
    expect(first.searchText('org_b', 'col_1', 'certificate', 5)).toEqual([]);
    first.close();
    const reopened = new ChunkStore(path);
    expect(reopened.searchText('org_a', 'col_1', 'certificate', 5)).toEqual(before.text);
    expect(reopened.searchVectors('org_a', 'col_1', 8, vectors[0]!, 1)).toEqual(before.vector);
    // a change is seen by the next search
    reopened.deleteDocument('org_a', 'col_1', 'doc_1');
    expect(reopened.searchText('org_a', 'col_1', 'certificate', 5)).toEqual([]);
    expect(reopened.searchVectors('org_a', 'col_1', 8, vectors[0]!, 1)).toEqual([]);
    reopened.close();
  });
});
