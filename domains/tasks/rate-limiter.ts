/**
 * Per-trigger rate limit of `/hooks/:trigger_id`: a token bucket per task
 * holding `rate_limit_per_minute` tokens, refilled continuously, so a burst
 * of a full minute's allowance passes and the steady rate is the limit.
 * In memory: the limit protects this process, it is not a billing meter.
 */

interface Bucket {
  tokens: number;
  updatedMs: number;
  perMinute: number;
}

export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSecs: number };

/** Buckets kept before idle ones are dropped (a full bucket carries no information). */
const MAX_BUCKETS = 100_000;

export class TriggerRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number) {}

  take(key: string, perMinute: number): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.perMinute !== perMinute) {
      if (this.buckets.size >= MAX_BUCKETS) this.dropFull(now);
      bucket = { tokens: perMinute, updatedMs: now, perMinute };
      this.buckets.set(key, bucket);
    }
    const perMs = perMinute / 60_000;
    bucket.tokens = Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.updatedMs) * perMs);
    bucket.updatedMs = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSecs: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
  }

  forget(key: string): void {
    this.buckets.delete(key);
  }

  private dropFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedMs) * (bucket.perMinute / 60_000) >= bucket.perMinute) this.buckets.delete(key);
    }
  }
}
