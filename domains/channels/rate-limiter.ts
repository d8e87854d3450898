/**
 * Per channel and per user limits on the runs inbound messages start, so a
 * busy channel cannot exhaust the organization's LLM spend. A sliding window
 * of one minute per key, in memory (limits are per process).
 */

/** Defaults, overridable per channel in `filter_config.rate_limits`. */
export const DEFAULT_RATE_LIMITS = {
  /** runs a channel may start per minute */
  per_channel_per_minute: 30,
  /** runs one chat user may start per minute in a channel */
  per_user_per_minute: 5,
} as const;

export interface RateLimits {
  readonly per_channel_per_minute: number;
  readonly per_user_per_minute: number;
}

const WINDOW_MS = 60_000;
/** keys kept before old ones are swept */
const MAX_KEYS = 10_000;

export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly now: () => number) {}

  /** Counts a hit when under `limit` in the last minute; false (not counted) when over. */
  take(key: string, limit: number): boolean {
    const now = this.now();
    const recent = (this.hits.get(key) ?? []).filter((at) => now - at < WINDOW_MS);
    if (recent.length >= limit) {
      this.hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (this.hits.size > MAX_KEYS) this.sweep(now);
    return true;
  }

  /** Gives a hit back (the run was not started after all). */
  release(key: string): void {
    this.hits.get(key)?.pop();
  }

  private sweep(now: number): void {
    for (const [key, times] of this.hits) {
      if (times.every((at) => now - at >= WINDOW_MS)) this.hits.delete(key);
    }
  }
}

/** The channel's limits: its `filter_config.rate_limits` over the defaults (invalid values are ignored). */
export function rateLimitsOf(filterConfig: Readonly<Record<string, unknown>> | null): RateLimits {
  const configured = filterConfig?.['rate_limits'];
  const pick = (name: keyof RateLimits): number => {
    const value = typeof configured === 'object' && configured !== null ? (configured as Record<string, unknown>)[name] : undefined;
    return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : DEFAULT_RATE_LIMITS[name];
  };
  return { per_channel_per_minute: pick('per_channel_per_minute'), per_user_per_minute: pick('per_user_per_minute') };
}
