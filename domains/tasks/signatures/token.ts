/**
 * A shared token, for senders that cannot sign (build servers' notification
 * plugins): `X-Webhook-Token: <token>`, `Authorization: Bearer <token>` or
 * `?token=<token>`. Weaker than a signature: the body is not covered, and a
 * token in the query string can end up in proxy logs. Both sides are hashed
 * before the constant-time comparison, so their lengths leak nothing either.
 */
import { constantTimeEqual, sha256Hex } from '../../../runtime/crypto.js';
import { plainSecretProblem, type SignedRequest, type SignatureVerifier } from './types.js';

function presented(request: SignedRequest): string | undefined {
  const header = request.headers['x-webhook-token'];
  if (header !== undefined) return header.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers['authorization'] ?? '')?.[1];
  if (bearer !== undefined) return bearer;
  return request.query?.get('token') ?? undefined;
}

export const tokenScheme: SignatureVerifier = {
  userSecret: 'allowed',
  setup: () => ({
    scheme: 'token',
    header: 'X-Webhook-Token',
    headers: ['X-Webhook-Token'],
    algorithm: 'shared token (no signature)',
    format: '<token>; or Authorization: Bearer <token>; or ?token=<token> on the URL',
    secret_source: 'service_or_sender',
  }),
  secretProblem: plainSecretProblem,
  verify(secret, request) {
    const token = presented(request);
    if (token === undefined || token === '') return 'missing';
    return constantTimeEqual(Buffer.from(sha256Hex(token), 'hex'), Buffer.from(sha256Hex(secret), 'hex')) ? 'valid' : 'invalid';
  },
  failure: () => 'the token (X-Webhook-Token, Authorization: Bearer or ?token=) is missing or wrong',
};
