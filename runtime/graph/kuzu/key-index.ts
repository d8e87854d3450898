/**
 * What a graph table holds, known in memory so that upserts of new records
 * skip their existence lookups (about a third of a batch's engine time).
 *
 * A KeySet holds a 64-bit hash of every key (node `_key`, or a
 * relationship's from/to pair) stored in its table: 16 to 32 bytes a key
 * (the table is kept a quarter to half full), whatever the key's length.
 * `has` false means surely absent, as long as every write to the table adds
 * its keys here (KuzuGraph drops its sets after a write it cannot follow,
 * such as a Cypher write, and after a rollback). `has` true means present,
 * except for a hash collision (about n / 2^64) or a relationship deleted
 * with its node: a key taken as present is looked up, or, for a
 * relationship's end node, checked by the engine itself, which refuses the
 * COPY; the batch is then written again with its sets read afresh.
 */

/** slot words: a key's high word is never 0; (0, 0) is an empty slot, (0, 1) a deleted key's (probing goes on past it) */
const FREE = 0;
const DELETED_LOW = 1;
const MIN_SLOTS = 1024;

export class KeySet {
  /** slot i: hashes at [2i] (high, never 0 for a key) and [2i + 1] (low) */
  private slots = new Uint32Array(MIN_SLOTS * 2);
  private used = 0;
  private live = 0;

  get size(): number {
    return this.live;
  }

  has(key: string): boolean {
    const [high, low] = hash64(key);
    return this.find(high, low) >= 0;
  }

  add(key: string): void {
    const [high, low] = hash64(key);
    if (this.find(high, low) >= 0) return;
    // at most half the slots used (tombstones count): probes stay short
    if ((this.used + 1) * 2 > this.slots.length / 2) this.resize();
    let slot = this.start(high);
    for (;;) {
      if (this.slots[slot * 2] === FREE) {
        // a never-used slot adds to the probe chains; a deleted key's is reused
        if (this.slots[slot * 2 + 1] !== DELETED_LOW) this.used += 1;
        break;
      }
      slot = (slot + 1) & (this.slots.length / 2 - 1);
    }
    this.slots[slot * 2] = high;
    this.slots[slot * 2 + 1] = low;
    this.live += 1;
  }

  delete(key: string): void {
    const [high, low] = hash64(key);
    const slot = this.find(high, low);
    if (slot < 0) return;
    this.slots[slot * 2] = FREE;
    this.slots[slot * 2 + 1] = DELETED_LOW;
    this.live -= 1;
  }

  /** the slot holding this hash, or -1 */
  private find(high: number, low: number): number {
    const mask = this.slots.length / 2 - 1;
    for (let slot = this.start(high); ; slot = (slot + 1) & mask) {
      const slotHigh = this.slots[slot * 2]!;
      const slotLow = this.slots[slot * 2 + 1]!;
      if (slotHigh === high && slotLow === low) return slot;
      if (slotHigh === FREE && slotLow !== DELETED_LOW) return -1;
    }
  }

  private start(high: number): number {
    return high & (this.slots.length / 2 - 1);
  }

  /** twice the room for the live keys (tombstones are dropped) */
  private resize(): void {
    const old = this.slots;
    let count = MIN_SLOTS;
    while (count < this.live * 4) count *= 2;
    this.slots = new Uint32Array(count * 2);
    this.used = 0;
    this.live = 0;
    const mask = count - 1;
    for (let at = 0; at < old.length; at += 2) {
      const high = old[at]!;
      if (high === FREE) continue;
      let slot = high & mask;
      while (this.slots[slot * 2] !== FREE) slot = (slot + 1) & mask;
      this.slots[slot * 2] = high;
      this.slots[slot * 2 + 1] = old[at + 1]!;
      this.used += 1;
      this.live += 1;
    }
  }
}

/**
 * Two independent 32-bit hashes of the UTF-16 code units (multiply-xorshift
 * mixing in each lane). The high word is never 0: 0 marks empty slots.
 */
export function hash64(key: string): [number, number] {
  let a = 0x9e3779b9 ^ key.length;
  let b = 0x85ebca6b ^ key.length;
  for (let at = 0; at < key.length; at += 1) {
    const unit = key.charCodeAt(at);
    a = Math.imul(a ^ unit, 0x5bd1e995);
    a ^= a >>> 15;
    b = Math.imul(b ^ unit, 0x27d4eb2f);
    b ^= b >>> 13;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a = Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  a ^= a >>> 16;
  b = Math.imul(b ^ (b >>> 16), 0x7feb352d);
  b = Math.imul(b ^ (b >>> 15), 0x846ca68b);
  b ^= b >>> 16;
  return [a >>> 0 || 1, b >>> 0];
}
