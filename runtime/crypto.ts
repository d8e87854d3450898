/** The one place for secret generation, hashing and constant-time comparison. */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters from [A-Za-z0-9], crypto-random and unbiased (rejection sampling). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: bytes at or above it would bias the first characters
      if (byte < 248) out += ALPHANUMERIC[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const sha256Hex = (value: string | Uint8Array): string => createHash('sha256').update(value).digest('hex');

/** Constant-time equality of two byte strings; unequal lengths return false without early exit on content. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) {
    // still spend a comparison so timing does not reveal which check failed
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Checks `sha256=<hex>` against HMAC-SHA256(secret, raw body), on raw bytes, in constant time. */
export function verifyHmacSignature(secret: string | Uint8Array, rawBody: Uint8Array, header: string | undefined): boolean {
  if (header === undefined) return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match?.[1]) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return constantTimeEqual(expected, Buffer.from(match[1], 'hex'));
}

export const signHmac = (secret: string | Uint8Array, rawBody: Uint8Array): string =>
  'sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex');
