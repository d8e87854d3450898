/**
 * GitHub (and senders copying it): `X-Hub-Signature-256: sha256=<hex
 * HMAC-SHA256 of the raw body>`, keyed by the secret pasted into the
 * webhook's settings (the task's whsec_ secret, or one given as
 * trigger.secret). GitHub signs no timestamp; its `X-GitHub-Delivery` id is
 * deduplicated (a repeat starts nothing).
 */
import { verifyHmacSignature } from '../../../runtime/crypto.js';
import { plainSecretProblem, type SignatureVerifier } from './types.js';

export const githubScheme: SignatureVerifier = {
  userSecret: 'allowed',
  setup: () => ({
    scheme: 'github',
    header: 'X-Hub-Signature-256',
    headers: ['X-Hub-Signature-256'],
    algorithm: 'HMAC-SHA256',
    format: 'sha256=<hex HMAC of the raw body>',
    secret_source: 'service_or_sender',
  }),
  secretProblem: plainSecretProblem,
  verify(secret, request) {
    const header = request.headers['x-hub-signature-256'];
    if (header === undefined) return 'missing';
    return verifyHmacSignature(secret, request.body, header) ? 'valid' : 'invalid';
  },
  failure: () => 'X-Hub-Signature-256 is missing or is not sha256=<hex HMAC-SHA256 of the body keyed by the webhook secret>',
};
