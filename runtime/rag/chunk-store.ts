/**
 * Where RAG chunks live: an embedded SQLite file (`DATA_DIR/rag.db`) with
 * each chunk's text, heading path and vector (float32 blob): the durable
 * copy. Search runs over two in-memory indexes per collection, rebuilt from
 * these rows on the first search after a change (so a restart loses
 * nothing): BM25 over text and headings (text-index.ts; it replaced an FTS5
 * table, ~10x slower at 100k chunks) and the vectors as one matrix scanned
 * with WebAssembly SIMD (vector-index.ts).
 *
 * Rows carry their organization and collection: every read names both, so a
 * collection id of another organization finds nothing.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { PRIVATE_DIR_MODE, tightenFiles } from '../file-modes.js';
import type { Chunk } from './chunking.js';
import { TextIndex, type TextHit } from './text-index.js';
import { normalize, VectorMatrix, type VectorHit } from './vector-index.js';

export interface StoredChunk {
  readonly rowId: number;
  readonly documentId: string;
  readonly position: number;
  readonly headingPath: readonly string[];
  readonly text: string;
}

interface ChunkRow {
  rid: number;
  document_id: string;
  position: number;
  heading_path: string;
  text: string;
}

export class ChunkStore {
  private readonly db: Database.Database;
  /** per organization and collection: the indexes built since its last change */
  private readonly indexes = new Map<string, { matrix?: VectorMatrix; text?: TextIndex }>();

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
      DROP TABLE IF EXISTS chunks_fts;
    `);
  }

  /** Replaces a document's chunks (and their vectors) in one transaction. */
  replaceDocument(org: string, collection: string, document: string, chunks: readonly Chunk[], vectors: readonly (Float32Array | null)[]): void {
    const insert = this.db.prepare(
      'INSERT INTO chunks (org_id, collection_id, document_id, position, heading_path, text, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      this.deleteRows(org, collection, document);
      chunks.forEach((chunk, index) => {
        const vector = vectors[index];
        const blob = vector ? Buffer.from(normalize(Float32Array.from(vector)).buffer) : null;
        insert.run(org, collection, document, chunk.position, JSON.stringify(chunk.heading_path), chunk.text, blob);
      });
    })();
    this.indexes.delete(`${org}\u0000${collection}`);
  }

  deleteDocument(org: string, collection: string, document: string): number {
    const removed = this.db.transaction(() => this.deleteRows(org, collection, document))();
    this.indexes.delete(`${org}\u0000${collection}`);
    return removed;
  }

  deleteCollection(org: string, collection: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM chunks WHERE org_id = ? AND collection_id = ?').run(org, collection);
    })();
    this.indexes.delete(`${org}\u0000${collection}`);
  }

  private deleteRows(org: string, collection: string, document: string): number {
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
  searchText(org: string, collection: string, query: string, k: number, allow?: ReadonlySet<string>): TextHit[] {
    return this.textIndex(org, collection).search(query, k, allow);
  }

  /** Cosine over the collection's vectors, best first. `query` need not be unit length. */
  searchVectors(org: string, collection: string, dimension: number, query: Float32Array, k: number, allow?: ReadonlySet<string>): VectorHit[] {
    return this.matrix(org, collection, dimension).search(normalize(Float32Array.from(query)), k, allow);
  }

  private cached(org: string, collection: string): { matrix?: VectorMatrix; text?: TextIndex } {
    const key = `${org}\u0000${collection}`;
    let entry = this.indexes.get(key);
    if (entry === undefined) {
      entry = {};
      this.indexes.set(key, entry);
    }
    return entry;
  }

  private textIndex(org: string, collection: string): TextIndex {
    const entry = this.cached(org, collection);
    if (entry.text !== undefined) return entry.text;
    const rows = this.db.prepare('SELECT rid, document_id, heading_path, text FROM chunks WHERE org_id = ? AND collection_id = ?').all(org, collection) as {
      rid: number;
      document_id: string;
      heading_path: string;
      text: string;
    }[];
    entry.text = TextIndex.build(
      rows.map((row) => ({ rowId: row.rid, documentId: row.document_id, text: row.text, heading: (JSON.parse(row.heading_path) as string[]).join(' / ') })),
    );
    return entry.text;
  }

  private matrix(org: string, collection: string, dimension: number): VectorMatrix {
    const entry = this.cached(org, collection);
    if (entry.matrix !== undefined && entry.matrix.dimension === dimension) return entry.matrix;
    const rows = this.db
      .prepare('SELECT rid, document_id, embedding FROM chunks WHERE org_id = ? AND collection_id = ? AND embedding IS NOT NULL')
      .all(org, collection) as { rid: number; document_id: string; embedding: Buffer }[];
    entry.matrix = VectorMatrix.build(
      dimension,
      rows.map((row) => ({
        rowId: row.rid,
        documentId: row.document_id,
        vector: new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4),
      })),
    );
    return entry.matrix;
  }

  /** The chunks of these row ids (of the organization only), by row id. */
  chunks(org: string, rowIds: readonly number[]): Map<number, StoredChunk> {
    const found = new Map<number, StoredChunk>();
    if (rowIds.length === 0) return found;
    // `+org_id`: looked up by rowid; on `org_id` SQLite would walk the organization's index (every chunk: ~15 ms at 100k)
    const rows = this.db
      .prepare(`SELECT rid, document_id, position, heading_path, text FROM chunks WHERE rid IN (${rowIds.map(() => '?').join(',')}) AND +org_id = ?`)
      .all(...rowIds, org) as ChunkRow[];
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
    this.indexes.clear();
    this.db.close();
  }
}
