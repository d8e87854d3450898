/**
 * Signatures on outbound deliveries, two schemes on every POST:
 *
 * - `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>` keyed by
 *   the webhook's secret as given (its UTF-8 bytes), like inbound /hooks.
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id` (the
 *   delivery id, the same on every retry, so receivers deduplicate),
 *   `webhook-timestamp` (Unix seconds of this attempt, so receivers reject
 *   replays outside their tolerance) and `webhook-signature`
 *   (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated when
 *   several secrets sign).
 *
 * Secret mapping: the Standard Webhooks key is the bytes the secret names. A
 * secret written `whsec_<base64>` is decoded (that is the spec's own form);
 * any other secret is used as its UTF-8 bytes, and a Standard Webhooks
 * library verifies it when given `whsec_` + base64(secret), which
 * `standardWebhooksSecret` computes and the API shows at creation/rotation.
 *
 * During a rotation overlap the body signature of the previous secret goes in
 * `X-Service-Signature-Previous`, and `webhook-signature` carries both.
 */
import { signHmac } from '../../runtime/crypto.js';

const WHSEC = 'whsec_';

/** The HMAC key of the Standard Webhooks signature for one of our secrets. */
function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC)) {
    const decoded = Buffer.from(secret.slice(WHSEC.length), 'base64');
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

/** The `whsec_` form a Standard Webhooks library needs to verify deliveries signed with `secret`. */
export const standardWebhooksSecret = (secret: string): string => WHSEC + standardWebhooksKey(secret).toString('base64');

export interface SigningInput {
  /** the delivery id */
  readonly id: string;
  /** Unix seconds */
  readonly timestamp: number;
  readonly body: Buffer;
  readonly secret: string;
  /** the secret before a rotation, while its overlap lasts */
  readonly previousSecret: string | null;
}

/** `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>`; the HMAC is crypto.ts's (hex), re-encoded */
function standardSignature(key: Buffer, id: string, timestamp: number, body: Buffer): string {
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  const hex = signHmac(key, signed).slice('sha256='.length);
  return 'v1,' + Buffer.from(hex, 'hex').toString('base64');
}

/** The signature headers of one attempt. */
export function signatureHeaders(input: SigningInput): Record<string, string> {
  const { id, timestamp, body, secret, previousSecret } = input;
  const signatures = [standardSignature(standardWebhooksKey(secret), id, timestamp, body)];
  const headers: Record<string, string> = {
    'x-service-signature': signHmac(secret, body),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
  };
  if (previousSecret !== null) {
    headers['x-service-signature-previous'] = signHmac(previousSecret, body);
    signatures.push(standardSignature(standardWebhooksKey(previousSecret), id, timestamp, body));
  }
  headers['webhook-signature'] = signatures.join(' ');
  return headers;
}
