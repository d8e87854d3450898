/** Signature scheme -> its verifier (one module each in this folder). */
import { githubScheme } from './github.js';
import { serviceScheme } from './service.js';
import { slackScheme } from './slack.js';
import { standardWebhooksScheme } from './standard-webhooks.js';
import { tokenScheme } from './token.js';
import type { SignatureScheme, SignatureVerifier } from './types.js';
import { vercelScheme } from './vercel.js';

export { SIGNATURE_SCHEMES, type SchemeCheck, type SignatureScheme } from './types.js';

const VERIFIERS: Readonly<Record<SignatureScheme, SignatureVerifier>> = {
  service: serviceScheme,
  github: githubScheme,
  vercel: vercelScheme,
  standard_webhooks: standardWebhooksScheme,
  slack: slackScheme,
  token: tokenScheme,
};

/** A task saved before schemes existed has none: the service's own. */
export const verifierOf = (scheme: SignatureScheme | undefined): SignatureVerifier => VERIFIERS[scheme ?? 'service'];
