/**
 * Slack (v0): `X-Slack-Signature` and `X-Slack-Request-Timestamp`, keyed by
 * the app's signing secret (given as trigger.secret); the channels' own
 * verifier (domains/channels/slack-signature.ts), five-minute window.
 */
import { checkSlackSignature, MAX_REQUEST_AGE_SECS } from '../../channels/slack-signature.js';
import { plainSecretProblem, type SchemeCheck, type SignatureVerifier } from './types.js';

const CHECKS = { ok: 'valid', missing: 'missing', stale: 'stale_timestamp', mismatch: 'invalid' } as const satisfies Record<string, SchemeCheck>;

export const slackScheme: SignatureVerifier = {
  userSecret: 'required',
  setup: () => ({
    scheme: 'slack',
    header: 'X-Slack-Signature',
    headers: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'],
    algorithm: 'HMAC-SHA256',
    format: 'v0=<hex HMAC of "v0:<X-Slack-Request-Timestamp>:<raw body>">',
    secret_source: 'sender',
    timestamp_tolerance_secs: MAX_REQUEST_AGE_SECS,
  }),
  secretProblem: plainSecretProblem,
  verify: (secret, request, { nowMs }) => CHECKS[checkSlackSignature(secret, request.headers, request.body, nowMs)],
  failure: (check) =>
    check === 'stale_timestamp'
      ? `X-Slack-Request-Timestamp is more than ${MAX_REQUEST_AGE_SECS} s away from now`
      : 'X-Slack-Signature or X-Slack-Request-Timestamp is missing, or the signature is not v0=<hex HMAC-SHA256 keyed by the signing secret>',
};
