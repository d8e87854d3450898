/**
 * The service's own scheme (the default): `X-Service-Signature:
 * sha256=<hex HMAC-SHA256 of the raw body>` keyed by the task's whsec_
 * secret; with `require_timestamp` the signed bytes are
 * `<X-Service-Timestamp>.<body>` and the timestamp must be within the
 * tolerance.
 */
import { verifyHmacSignature } from '../../../runtime/crypto.js';
import { timestampWithin, type SignatureVerifier } from './types.js';

export const serviceScheme: SignatureVerifier = {
  userSecret: 'refused',
  setup: ({ requireTimestamp, toleranceSecs }) => ({
    scheme: 'service',
    header: 'X-Service-Signature',
    headers: requireTimestamp ? ['X-Service-Signature', 'X-Service-Timestamp'] : ['X-Service-Signature'],
    algorithm: 'HMAC-SHA256',
    format: requireTimestamp ? 'sha256=<hex HMAC of "<X-Service-Timestamp>.<raw body>">' : 'sha256=<hex HMAC of the raw body>',
    secret_source: 'service',
    ...(requireTimestamp ? { timestamp_tolerance_secs: toleranceSecs } : {}),
  }),
  // any secret keys it (one set by hand under another scheme stays usable after a switch back)
  secretProblem: () => null,
  verify(secret, request, context) {
    const header = request.headers['x-service-signature'];
    if (header === undefined) return 'missing';
    let signed = request.body;
    if (context.requireTimestamp) {
      const stamp = request.headers['x-service-timestamp'];
      if (!timestampWithin(stamp, context.nowMs, context.toleranceSecs)) return 'stale_timestamp';
      signed = Buffer.concat([Buffer.from(`${stamp?.trim() ?? ''}.`), request.body]);
    }
    return verifyHmacSignature(secret, signed, header) ? 'valid' : 'invalid';
  },
  failure: (check, { toleranceSecs }) =>
    check === 'stale_timestamp'
      ? `X-Service-Timestamp is missing or more than ${toleranceSecs} s away from now`
      : 'X-Service-Signature is missing or is not sha256=<hex HMAC-SHA256 of the body keyed by the task secret>',
};
