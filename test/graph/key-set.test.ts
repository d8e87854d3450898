import { describe, expect, it } from 'vitest';
import { hash64, KeySet } from '../../runtime/graph/kuzu/key-index.js';

describe('KeySet (what a graph table stores, as 64-bit hashes)', () => {
  it('holds every key added, and none other, across its resizes', () => {
    const keys = new KeySet();
    for (let at = 0; at < 100_000; at += 1) keys.add(`svc-${at}`);
    expect(keys.size).toBe(100_000);
    let missing = 0;
    let extra = 0;
    for (let at = 0; at < 100_000; at += 1) {
      if (!keys.has(`svc-${at}`)) missing += 1;
      if (keys.has(`svc-${at + 100_000}`) || keys.has(`SVC-${at}`)) extra += 1;
    }
    expect({ missing, extra }).toEqual({ missing: 0, extra: 0 });
    keys.add('svc-1');
    expect(keys.size).toBe(100_000);
  });

  it('forgets a deleted key and still finds the keys probed past it', () => {
    const keys = new KeySet();
    for (let at = 0; at < 5000; at += 1) keys.add(`k${at}`);
    for (let at = 0; at < 5000; at += 2) keys.delete(`k${at}`);
    expect(keys.size).toBe(2500);
    for (let at = 0; at < 5000; at += 1) expect(keys.has(`k${at}`)).toBe(at % 2 === 1);
    // deleted slots are reused, and the set grows past them
    for (let at = 0; at < 20_000; at += 2) keys.add(`k${at}`);
    expect(keys.size).toBe(12_500);
    for (let at = 0; at < 20_000; at += 1) expect(keys.has(`k${at}`)).toBe(at % 2 === 0 || at < 5000);
    keys.delete('absent');
    expect(keys.size).toBe(12_500);
  });

  it('hashes keys that differ by one character, by order or by length apart', () => {
    const seen = new Set<string>();
    for (const key of ['', 'a', 'b', 'ab', 'ba', 'a\u0000', '\u0000a', 'ünï', 'x'.repeat(512), 'x'.repeat(511)]) {
      const [high, low] = hash64(key);
      expect(high).not.toBe(0);
      seen.add(`${high}:${low}`);
    }
    expect(seen.size).toBe(10);
  });
});
