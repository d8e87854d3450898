/**
 * The write queue: upsert batches wait here and are committed together.
 *
 * Committing new relationships costs ~55 ms for 10k of them and ~65 ms for
 * 40k (the engine rewrites the adjacency of every node group they touch),
 * while a COPY costs by the row; so one transaction takes the waiting
 * batches one after the other, and those that arrive while it runs (up to
 * MAX_MERGED_ROWS). When it has taken fewer batches than there were writers
 * at the end of the last one, the writers that were just answered are likely
 * sending their next batches: it waits for each, at most GATHER_MS, so that
 * the engine writes one batch while the next is parsed and they share one
 * commit. A single sequential writer never waits.
 *
 * Each caller still gets all or nothing for its own batch. A batch that
 * fails its checks (see GraphSchema.plan) is refused before any of it runs,
 * and the others go on; when the engine fails, the transaction is rolled
 * back and each of its batches is written again alone.
 */
import type { WriteBatch } from '../batches.js';
import type { FtsIndexes } from './fts-index.js';
import type { KeySets } from './key-sets.js';
import type { GraphSchema, TableChange } from './schema.js';
import type { KuzuSession } from './session.js';
import type { BatchWriter } from './writer.js';

/** most rows one merged write transaction takes (a single batch of any size still goes alone) */
const MAX_MERGED_ROWS = 50_000;
/** longest a drain waits for the batches of writers it just answered (see drain) */
const GATHER_MS = 50;

type PendingWrite = WriteBatch & { readonly resolve: (count: number) => void; readonly reject: (error: unknown) => void };

export interface GroupCommitParts {
  readonly session: KuzuSession;
  readonly schema: GraphSchema;
  readonly fts: FtsIndexes;
  readonly keySets: KeySets;
  readonly writer: BatchWriter;
}

export class GroupCommit {
  /** upserts waiting for the database */
  private readonly writes: PendingWrite[] = [];
  private drainScheduled = false;
  /** writers at the end of the last write transaction: the batches it took and those waiting (see drain) */
  private writers = 0;
  /** ends a drain's wait for batches (see drain) */
  private gathered: (() => void) | null = null;

  constructor(private readonly parts: GroupCommitParts) {}

  /** resolves with the batch's count once it is committed; rejects when it is refused or the engine failed it */
  enqueue(write: WriteBatch): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.writes.push({ ...write, resolve, reject });
      this.gathered?.();
      if (!this.drainScheduled) {
        this.drainScheduled = true;
        void this.parts.session.serial(() => this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    const { session, schema, fts, keySets, writer } = this.parts;
    const taken: PendingWrite[] = [];
    let rows = 0;
    try {
      for (;;) {
        const next = this.writes[0] ?? (taken.length > 0 && taken.length < this.writers && rows < MAX_MERGED_ROWS ? await this.gather() : undefined);
        if (!next || (taken.length > 0 && rows + next.count > MAX_MERGED_ROWS)) break;
        let changes: TableChange[];
        try {
          changes = schema.plan(next);
        } catch (error) {
          this.writes.shift();
          next.reject(error);
          continue;
        }
        // the engine drops a full-text index only outside a transaction: such a batch starts the next one
        const indexes = fts.toDropFor(next, keySets);
        if (indexes.length > 0 && taken.length > 0) break;
        this.writes.shift();
        taken.push(next);
        rows += next.count;
        for (const label of indexes) await fts.drop(label);
        if (taken.length === 1) await session.exec('BEGIN TRANSACTION');
        await writer.write(next, changes);
      }
      if (taken.length > 0) await session.exec('COMMIT');
      for (const write of taken) write.resolve(write.count);
    } catch {
      await this.rollBack();
      for (const write of taken) await this.writeAlone(write);
    }
    this.writers = taken.length + this.writes.length;
    if (this.writes.length > 0) void session.serial(() => this.drain());
    else this.drainScheduled = false;
  }

  /** the next batch to arrive within GATHER_MS, if any */
  private gather(): Promise<PendingWrite | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.gathered = null;
        resolve(undefined);
      }, GATHER_MS);
      this.gathered = () => {
        clearTimeout(timer);
        this.gathered = null;
        resolve(this.writes[0]);
      };
    });
  }

  /** one batch in its own transaction (after a shared one failed) */
  private async writeAlone(write: PendingWrite): Promise<void> {
    const { session, schema, fts, keySets, writer } = this.parts;
    let open = false;
    try {
      const changes = schema.plan(write);
      for (const label of fts.toDropFor(write, keySets)) await fts.drop(label);
      await session.exec('BEGIN TRANSACTION');
      open = true;
      await writer.write(write, changes);
      await session.exec('COMMIT');
      write.resolve(write.count);
    } catch (error) {
      if (open) await this.rollBack();
      write.reject(error);
    }
  }

  /**
   * After a failed write transaction: what it changed in the schema and
   * added to the key sets is gone with it, so both are read afresh (the sets
   * lazily), and a key set that misled the batch (see KeySet) is mended.
   */
  private async rollBack(): Promise<void> {
    const { session, schema, keySets } = this.parts;
    // the engine ends a transaction by itself when a statement in it fails
    await session.exec('ROLLBACK').catch(() => undefined);
    keySets.clear();
    // should the engine fail this too, the writes that follow fail and are refused, and each reads it again
    await schema.load().catch(() => undefined);
  }
}
