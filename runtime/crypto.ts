/** The one place for secret generation, hashing and constant-time comparison. */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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

/** The raw HMAC of `parts` in order (SHA-1 only for senders that sign with it); compare with constantTimeEqual. */
export function hmacDigest(algorithm: 'sha1' | 'sha256', key: string | Uint8Array, ...parts: readonly (string | Uint8Array)[]): Buffer {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

export const signHmac = (secret: string | Uint8Array, rawBody: Uint8Array): string => 'sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex');

/** A 32-byte key for one purpose, derived from a root secret (HMAC-SHA256 as a KDF). */
export const deriveKey = (root: Uint8Array, purpose: string): Buffer => createHmac('sha256', root).update(purpose).digest();

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to `context` as associated data. */
export function seal(key: Uint8Array, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** Inverse of `seal`; throws when the key, context or bytes do not match. */
export function unseal(key: Uint8Array, sealed: string, context: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
