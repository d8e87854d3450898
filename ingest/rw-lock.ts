/**
 * A readers-writer lock per key. Inserts into a context table hold it shared;
 * ALTER TABLE holds it exclusive: DuckDB aborts an insert whose table was
 * altered by a transaction that committed meanwhile, so the two never overlap.
 * Writers are preferred so schema growth is not starved by a stream of inserts.
 */

interface Waiter {
  readonly exclusive: boolean;
  readonly grant: () => void;
}

class RwLock {
  readers = 0;
  writer = false;
  readonly queue: Waiter[] = [];

  get idle(): boolean {
    return this.readers === 0 && !this.writer && this.queue.length === 0;
  }

  acquire(exclusive: boolean): Promise<void> {
    if (this.queue.length === 0 && !this.writer && (!exclusive || this.readers === 0)) {
      if (exclusive) this.writer = true;
      else this.readers += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push({ exclusive, grant: resolve }));
  }

  release(exclusive: boolean): void {
    if (exclusive) this.writer = false;
    else this.readers -= 1;
    while (this.queue.length > 0 && !this.writer) {
      const next = this.queue[0] as Waiter;
      if (next.exclusive) {
        if (this.readers > 0) break;
        this.queue.shift();
        this.writer = true;
        next.grant();
        break;
      }
      this.queue.shift();
      this.readers += 1;
      next.grant();
    }
  }
}

export class KeyedRwLocks {
  private readonly locks = new Map<string, RwLock>();

  /** Runs `work` holding the lock of `key`, shared or exclusive. */
  async with<T>(key: string, exclusive: boolean, work: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(key);
    if (!lock) {
      lock = new RwLock();
      this.locks.set(key, lock);
    }
    await lock.acquire(exclusive);
    try {
      return await work();
    } finally {
      lock.release(exclusive);
      if (lock.idle) this.locks.delete(key);
    }
  }
}
