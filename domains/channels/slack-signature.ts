/**
 * Slack request signing (v0): `X-Slack-Signature: v0=<hex>` is HMAC-SHA256,
 * keyed by the app's signing secret, of `v0:<X-Slack-Request-Timestamp>:<raw body>`.
 * Checked on the raw bytes, in constant time (runtime/crypto.ts), before
 * anything is parsed. Requests older than five minutes are refused, so a
 * captured request cannot be replayed later.
 */
import { verifyHmacSignature } from '../../runtime/crypto.js';

/** Slack's own recommendation */
export const MAX_REQUEST_AGE_SECS = 5 * 60;

export type SignatureCheck = 'ok' | 'missing' | 'stale' | 'mismatch';

export function checkSlackSignature(signingSecret: string, headers: Readonly<Record<string, string>>, rawBody: Buffer, nowMs: number): SignatureCheck {
  const timestamp = headers['x-slack-request-timestamp'];
  const signature = headers['x-slack-signature'];
  if (timestamp === undefined || signature === undefined) return 'missing';
  if (!/^\d{1,12}$/.test(timestamp.trim())) return 'mismatch';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_REQUEST_AGE_SECS) return 'stale';
  const hex = /^v0=([0-9a-fA-F]{64})$/.exec(signature.trim())?.[1];
  if (hex === undefined) return 'mismatch';
  const base = Buffer.concat([Buffer.from(`v0:${timestamp.trim()}:`), rawBody]);
  return verifyHmacSignature(signingSecret, base, `sha256=${hex}`) ? 'ok' : 'mismatch';
}
