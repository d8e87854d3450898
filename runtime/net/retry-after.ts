/**
 * How long an HTTP answer asks the caller to wait before trying again: what
 * the LLM providers' retries and the outbound webhook deliveries both honour.
 */

/** Parses `retry-after-ms`, then `retry-after` (seconds or an HTTP date). */
// wall clock: an HTTP-date Retry-After is the sender's absolute time
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | null {
  if (headers === undefined) return null;
  const millis = headers.get('retry-after-ms');
  if (millis !== null && /^\d+(\.\d+)?$/.test(millis.trim())) return Math.ceil(Number(millis));
  const raw = headers.get('retry-after')?.trim();
  if (raw === undefined || raw === '') return null;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.ceil(Number(raw) * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
