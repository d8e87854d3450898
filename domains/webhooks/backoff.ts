/** When the next attempt of a failed outbound delivery goes out. */

/** no wait grows past this */
export const MAX_RETRY_DELAY_MS = 5 * 60_000;

/**
 * Exponential backoff with "equal jitter": after failed attempt `n` (1-based)
 * the wait is base * 2^(n-1), capped, of which a random half is dropped, so
 * many deliveries failing together do not retry in lockstep. A `Retry-After`
 * from the receiver (429/503) is honoured when longer, up to the cap.
 */
export function retryDelayMs(attempt: number, baseMs: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = exponential / 2 + random() * (exponential / 2);
  return Math.round(Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, retryAfterMs ?? 0)));
}
