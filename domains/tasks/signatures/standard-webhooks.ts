/**
 * Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp`
 * (Unix seconds, within the task's tolerance, default 300 s) and
 * `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<raw body>">` keyed by the base64 part of a
 * `whsec_<base64>` secret (the task's own secret is one). Any listed v1
 * signature may match (senders list several while rotating). The
 * `webhook-id` is deduplicated: a repeat starts nothing.
 */
import { constantTimeEqual, hmacDigest } from '../../../runtime/crypto.js';
import { timestampWithin, type SignatureVerifier } from './types.js';

const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The HMAC key of a `whsec_<base64>` (or bare base64) secret, or null when it is not one. */
function keyOf(secret: string): Buffer | null {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (!BASE64.test(encoded)) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 16 && key.length <= 64 ? key : null;
}

export const standardWebhooksScheme: SignatureVerifier = {
  userSecret: 'allowed',
  setup: ({ toleranceSecs }) => ({
    scheme: 'standard_webhooks',
    header: 'webhook-signature',
    headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    algorithm: 'HMAC-SHA256',
    format: 'v1,<base64 HMAC of "<webhook-id>.<webhook-timestamp>.<raw body>"> (space-separated list)',
    secret_source: 'service_or_sender',
    timestamp_tolerance_secs: toleranceSecs,
  }),
  secretProblem: (secret) => (keyOf(secret) === null ? 'a Standard Webhooks secret is whsec_<base64 of 16 to 64 bytes>' : null),
  verify(secret, request, { nowMs, toleranceSecs }) {
    const id = request.headers['webhook-id'];
    const stamp = request.headers['webhook-timestamp'];
    const header = request.headers['webhook-signature'];
    if (id === undefined || stamp === undefined || header === undefined) return 'missing';
    if (!timestampWithin(stamp, nowMs, toleranceSecs)) return 'stale_timestamp';
    const key = keyOf(secret);
    if (key === null) return 'invalid';
    const expected = hmacDigest('sha256', key, `${id}.${stamp}.`, request.body);
    let matched = false;
    // every listed signature is compared (no early exit)
    for (const entry of header.split(' ')) {
      const comma = entry.indexOf(',');
      if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
      const encoded = entry.slice(comma + 1);
      if (!BASE64.test(encoded)) continue;
      if (constantTimeEqual(expected, Buffer.from(encoded, 'base64'))) matched = true;
    }
    return matched ? 'valid' : 'invalid';
  },
  failure: (check, { toleranceSecs }) =>
    check === 'stale_timestamp'
      ? `webhook-timestamp is not Unix seconds within ${toleranceSecs} s of now`
      : 'webhook-id, webhook-timestamp or webhook-signature is missing, or no v1 signature matches the secret',
};
