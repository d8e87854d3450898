/** The media poller's delays: exponential from the base, capped, jittered to 50-100 % (not the SDK's fixed 6 s). */
import { describe, expect, it } from 'vitest';
import { pollDelay } from '../../domains/media/poller.js';

describe('media poll delay', () => {
  it('grows 1.6x per poll from the base up to the cap', () => {
    const top = (n: number) => pollDelay(n, 2000, 30_000, () => 1);
    expect([0, 1, 2, 3, 4, 5, 6, 7, 100].map(top)).toEqual([2000, 3200, 5120, 8192, 13107, 20972, 30000, 30000, 30000]);
  });

  it('jitters each delay between half and all of it', () => {
    expect(pollDelay(2, 2000, 30_000, () => 0)).toBe(2560);
    expect(pollDelay(2, 2000, 30_000, () => 0.5)).toBe(3840);
    const seen = new Set(Array.from({ length: 50 }, () => pollDelay(3, 2000, 30_000, Math.random)));
    expect(seen.size).toBeGreaterThan(1);
    for (const delay of seen) expect(delay >= 4096 && delay <= 8192).toBe(true);
  });
});
