/**
 * What the graph knows it stores, so that writes skip lookups: the keys of
 * each node table, and the from/to pairs of each relationship table's
 * FROM/TO pair (`pairTableOf`), read from the store on first use and kept in
 * step by the writes of the open transaction. Past the budget a set is let
 * go (null: look keys up). A set may hold a key that is no longer stored
 * (see KeySet); the writer copes with that.
 */
import { pairKey, type EdgeGroup } from '../batches.js';
import { KEY_PROPERTY, quote } from '../names.js';
import { KeySet } from './key-index.js';
import type { KuzuSession } from './session.js';

/** node offsets read per page when a key set is filled from the store */
const KEY_SET_PAGE = 100_000;

/** the key set name of a relationship table's FROM/TO pair */
export function pairTableOf(group: Pick<EdgeGroup, 'type' | 'from' | 'to'>): string {
  return `${group.type}|${group.from}|${group.to}`;
}

export class KeySets {
  /** per node table, and per relationship table's FROM/TO pair: what it stores (null: too large to hold) */
  private readonly sets = new Map<string, KeySet | null>();

  constructor(
    private readonly session: KuzuSession,
    /** most keys and pairs held in all sets together (0: always look keys up) */
    private readonly budget: number,
  ) {}

  /**
   * The keys stored in a node table, or the from/to pairs of a relationship
   * table's FROM/TO pair (`pairTableOf`), read from the store on first use;
   * null when the graph's sets would pass its budget (lookups then).
   */
  async of(table: string): Promise<KeySet | null> {
    if (this.budget === 0) return null;
    const held = this.sets.get(table);
    if (held !== undefined) return held;
    const { session } = this;
    const [type, from, to] = table.split('|') as [string, string?, string?];
    const counted =
      from === undefined
        ? await session.run(`MATCH (n:${quote(type)}) RETURN count(n) AS c, max(offset(id(n))) AS last`)
        : await session.run(`MATCH (a:${quote(from)})-[x:${quote(type)}]->(:${quote(to!)}) RETURN count(x) AS c, max(offset(id(a))) AS last`);
    const count = Number(counted[0]?.['c'] ?? 0);
    if (this.entries() + count > this.budget) {
      this.sets.set(table, null);
      return null;
    }
    const keys = new KeySet();
    const last = Number(counted[0]?.['last'] ?? -1);
    // read in pages of node offsets: one list per page (the driver converts a row at a time)
    for (let low = 0; count > 0 && low <= last; low += KEY_SET_PAGE) {
      const page = { low, high: low + KEY_SET_PAGE };
      if (from === undefined) {
        const rows = await session.run(
          `MATCH (n:${quote(type)}) WHERE offset(id(n)) >= $low AND offset(id(n)) < $high RETURN collect(n.${quote(KEY_PROPERTY)}) AS keys`,
          page,
        );
        for (const key of (rows[0]?.['keys'] ?? []) as string[]) keys.add(key);
      } else {
        const rows = await session.run(
          `MATCH (a:${quote(from)})-[:${quote(type)}]->(b:${quote(to!)}) WHERE offset(id(a)) >= $low AND offset(id(a)) < $high RETURN collect([a.${quote(KEY_PROPERTY)}, b.${quote(KEY_PROPERTY)}]) AS pairs`,
          page,
        );
        for (const [f, t] of (rows[0]?.['pairs'] ?? []) as [string, string][]) keys.add(pairKey({ f, t }));
      }
    }
    this.sets.set(table, keys);
    return keys;
  }

  /**
   * A table (or a relationship table's FROM/TO pair) the open transaction
   * just created: it holds nothing, so its set starts empty without a read.
   */
  created(table: string): void {
    if (this.budget > 0) this.sets.set(table, new KeySet());
  }

  /** the set of a table when it is loaded already (never reads the store) */
  loaded(table: string): KeySet | null | undefined {
    return this.sets.get(table);
  }

  /**
   * Adds keys a statement of the open transaction stored to their set, so
   * that what follows in it sees them as the engine does (a rollback drops
   * every set; a set that would pass the budget is let go).
   */
  remember(table: string, keys: readonly string[]): void {
    const set = this.sets.get(table);
    if (!set) return;
    if (this.entries() + keys.length > this.budget) this.sets.set(table, null);
    else for (const key of keys) set.add(key);
  }

  /** forgets a deleted node's key */
  forget(table: string, key: string): void {
    this.sets.get(table)?.delete(key);
  }

  /** drops every set (they are read afresh when next needed) */
  clear(): void {
    this.sets.clear();
  }

  private entries(): number {
    let entries = 0;
    for (const set of this.sets.values()) entries += set?.size ?? 0;
    return entries;
  }
}
