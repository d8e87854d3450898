/**
 * Where RAG chunks live: an embedded SQLite file (`DATA_DIR/rag.db`) with
 * each chunk's text, heading path and vector (float32 blob), and an FTS5 table
 * over text and headings ranked by BM25 (DuckDB's `fts` extension cannot be
 * installed offline here; SQLite's FTS5 is compiled into better-sqlite3).
 * Vector search runs over an in-memory matrix per collection, rebuilt from
 * the blobs on the first search after a change (vector-index.ts).
 *
 * Rows carry their organization and collection: every read names both, so a
 * collection id of another organization finds nothing.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { PRIVATE_DIR_MODE, tightenFiles } from '../file-modes.js';
import type { Chunk } from './chunking.js';
import { normalize, VectorMatrix, type VectorHit } from './vector-index.js';

export interface StoredChunk {
  readonly rowId: number;
  readonly documentId: string;
  readonly position: number;
  readonly headingPath: readonly string[];
  readonly text: string;
}

export interface TextHit {
  readonly rowId: number;
  /** BM25 relevance, higher is better (SQLite's bm25() negated) */
  readonly score: number;
}

interface ChunkRow {
  rid: number;
  document_id: string;
  position: number;
  heading_path: string;
  text: string;
}

// English function words: they match nearly every chunk, so they cost the most and rank nothing
const STOP_WORDS = new Set(
  'a an and are as at be by can do does for from how i if in into is it its of on or should that the then this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

/** Words of a query as an FTS5 expression: each word quoted (no operator of the user's reaches FTS5), any may match; stop words dropped unless nothing else is left. */
function ftsQuery(query: string): string | null {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const content = words.filter((word) => !STOP_WORDS.has(word));
  const unique = [...new Set(content.length > 0 ? content : words)].slice(0, 64);
  return unique.length === 0 ? null : unique.map((word) => `"${word}"`).join(' OR ');
}

export class ChunkStore {
  private readonly db: Database.Database;
  private readonly matrices = new Map<string, VectorMatrix>();

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    if (path !== ':memory:') tightenFiles([path, `${path}-wal`, `${path}-shm`]);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS chunks (
        rid INTEGER PRIMARY KEY,
        org_id TEXT NOT NULL,
        collection_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        heading_path TEXT NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB
      );
      CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (org_id, collection_id, document_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (text, heading, collection_id UNINDEXED, tokenize = 'porter unicode61');
      INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5)');
    `);
  }

  /** Replaces a document's chunks (and their vectors) in one transaction. */
  replaceDocument(org: string, collection: string, document: string, chunks: readonly Chunk[], vectors: readonly (Float32Array | null)[]): void {
    const insert = this.db.prepare(
      'INSERT INTO chunks (org_id, collection_id, document_id, position, heading_path, text, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const insertText = this.db.prepare('INSERT INTO chunks_fts (rowid, text, heading, collection_id) VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      this.deleteRows(org, collection, document);
      chunks.forEach((chunk, index) => {
        const vector = vectors[index];
        const blob = vector ? Buffer.from(normalize(Float32Array.from(vector)).buffer) : null;
        const { lastInsertRowid } = insert.run(org, collection, document, chunk.position, JSON.stringify(chunk.heading_path), chunk.text, blob);
        insertText.run(lastInsertRowid, chunk.text, chunk.heading_path.join(' / '), collection);
      });
    })();
    this.matrices.delete(collection);
  }

  deleteDocument(org: string, collection: string, document: string): number {
    const removed = this.db.transaction(() => this.deleteRows(org, collection, document))();
    this.matrices.delete(collection);
    return removed;
  }

  deleteCollection(org: string, collection: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM chunks_fts WHERE rowid IN (SELECT rid FROM chunks WHERE org_id = ? AND collection_id = ?)').run(org, collection);
      this.db.prepare('DELETE FROM chunks WHERE org_id = ? AND collection_id = ?').run(org, collection);
    })();
    this.matrices.delete(collection);
  }

  private deleteRows(org: string, collection: string, document: string): number {
    this.db
      .prepare('DELETE FROM chunks_fts WHERE rowid IN (SELECT rid FROM chunks WHERE org_id = ? AND collection_id = ? AND document_id = ?)')
      .run(org, collection, document);
    return this.db.prepare('DELETE FROM chunks WHERE org_id = ? AND collection_id = ? AND document_id = ?').run(org, collection, document).changes;
  }

  countChunks(org: string, collection: string, document?: string): number {
    const row =
      document === undefined
        ? this.db.prepare('SELECT count(*) AS n FROM chunks WHERE org_id = ? AND collection_id = ?').get(org, collection)
        : this.db.prepare('SELECT count(*) AS n FROM chunks WHERE org_id = ? AND collection_id = ? AND document_id = ?').get(org, collection, document);
    return (row as { n: number }).n;
  }

  /** BM25 over the collection's chunk text and headings, best first. */
  searchText(org: string, collection: string, query: string, k: number): TextHit[] {
    const match = ftsQuery(query);
    if (match === null) return [];
    const rows = this.db
      .prepare(
        `SELECT f.rowid AS rid, f.rank AS rank FROM chunks_fts f JOIN chunks c ON c.rid = f.rowid
         WHERE chunks_fts MATCH ? AND f.collection_id = ? AND c.org_id = ? ORDER BY f.rank LIMIT ?`,
      )
      .all(match, collection, org, k) as { rid: number; rank: number }[];
    return rows.map((row) => ({ rowId: row.rid, score: -row.rank }));
  }

  /** Cosine over the collection's vectors, best first. `query` need not be unit length. */
  searchVectors(org: string, collection: string, dimension: number, query: Float32Array, k: number, allow?: ReadonlySet<string>): VectorHit[] {
    return this.matrix(org, collection, dimension).search(normalize(Float32Array.from(query)), k, allow);
  }

  private matrix(org: string, collection: string, dimension: number): VectorMatrix {
    const cached = this.matrices.get(collection);
    if (cached !== undefined) return cached;
    const rows = this.db
      .prepare('SELECT rid, document_id, embedding FROM chunks WHERE org_id = ? AND collection_id = ? AND embedding IS NOT NULL')
      .all(org, collection) as { rid: number; document_id: string; embedding: Buffer }[];
    const matrix = VectorMatrix.build(
      dimension,
      rows.map((row) => ({
        rowId: row.rid,
        documentId: row.document_id,
        vector: new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4),
      })),
    );
    this.matrices.set(collection, matrix);
    return matrix;
  }

  /** The chunks of these row ids (of the organization only), by row id. */
  chunks(org: string, rowIds: readonly number[]): Map<number, StoredChunk> {
    const found = new Map<number, StoredChunk>();
    if (rowIds.length === 0) return found;
    const rows = this.db
      .prepare(`SELECT rid, document_id, position, heading_path, text FROM chunks WHERE org_id = ? AND rid IN (${rowIds.map(() => '?').join(',')})`)
      .all(org, ...rowIds) as ChunkRow[];
    for (const row of rows) {
      found.set(row.rid, {
        rowId: row.rid,
        documentId: row.document_id,
        position: row.position,
        headingPath: JSON.parse(row.heading_path) as string[],
        text: row.text,
      });
    }
    return found;
  }

  close(): void {
    this.matrices.clear();
    this.db.close();
  }
}
