/**
 * The deployment platform (Vercel): `x-vercel-signature: <hex HMAC-SHA1 of
 * the raw body>`, keyed by the secret the platform generates for the
 * webhook (given as trigger.secret). The platform signs no timestamp.
 */
import { constantTimeEqual, hmacDigest } from '../../../runtime/crypto.js';
import { plainSecretProblem, type SignatureVerifier } from './types.js';

export const vercelScheme: SignatureVerifier = {
  userSecret: 'required',
  setup: () => ({
    scheme: 'vercel',
    header: 'x-vercel-signature',
    headers: ['x-vercel-signature'],
    algorithm: 'HMAC-SHA1',
    format: '<hex HMAC of the raw body>',
    secret_source: 'sender',
  }),
  secretProblem: plainSecretProblem,
  verify(secret, request) {
    const header = request.headers['x-vercel-signature'];
    if (header === undefined) return 'missing';
    const hex = /^([0-9a-fA-F]{40})$/.exec(header.trim())?.[1];
    if (hex === undefined) return 'invalid';
    const expected = hmacDigest('sha1', secret, request.body);
    return constantTimeEqual(expected, Buffer.from(hex, 'hex')) ? 'valid' : 'invalid';
  },
  failure: () => 'x-vercel-signature is missing or is not the hex HMAC-SHA1 of the body keyed by the webhook secret',
};
