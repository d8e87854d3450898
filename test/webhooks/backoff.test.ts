/** The retry schedule of outbound deliveries: exponential, jittered, capped, Retry-After honoured. */
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_DELAY_MS, retryDelayMs } from '../../domains/webhooks/backoff.js';

describe('retryDelayMs', () => {
  it('doubles per attempt, with a random half dropped', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, 1000, null, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, 1000, null, () => 0))).toEqual([500, 1000, 2000, 4000]);
  });

  it('never waits longer than the cap', () => {
    expect(retryDelayMs(30, 1000, null, () => 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(2, 1000, 3_600_000, () => 0)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('waits at least what Retry-After asks', () => {
    expect(retryDelayMs(1, 1000, 7000, () => 0)).toBe(7000);
    expect(retryDelayMs(1, 1000, 10, () => 0)).toBe(500);
  });
});
