/**
 * The runtime clock: every time read of the service goes through one, so
 * tests inject XState's simulated clock and move time instead of sleeping
 * (cron fires, run timeouts, cost-cap days, token expiries, retention).
 */

/** XState's clock plus the current time in milliseconds. */
export interface RuntimeClock {
  now(): number;
  setTimeout(fn: () => void, timeout: number): unknown;
  clearTimeout(id: unknown): void;
}

/** The wall clock: the only place that reads it. */
export const systemClock: RuntimeClock = {
  now: () => Date.now(),
  setTimeout: (fn, timeout) => setTimeout(fn, timeout),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** `2026-11-24T10:00:00.000Z` of a time in milliseconds */
export const isoAt = (ms: number): string => new Date(ms).toISOString();

/** The UTC day (`2026-11-24`) of a time in milliseconds: the cost-cap day, the event-key day. */
export const dayOf = (ms: number): string => isoAt(ms).slice(0, 10);
