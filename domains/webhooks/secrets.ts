/**
 * Outbound webhook secrets at rest: sealed (AES-256-GCM) with a key derived
 * from the server's root secret, bound to the organization and webhook id so
 * a sealed value copied to another record does not open.
 */
import { deriveKey, randomAlphanumeric, seal, unseal } from '../../runtime/crypto.js';

/** a generated secret: 32 alphanumeric characters (~190 bits) */
export const generateWebhookSecret = (): string => randomAlphanumeric(32);

/** What a read shows instead of the secret. */
export const maskSecret = (hint: string): string => `****${hint}`;

export const secretHint = (secret: string): string => secret.slice(-4);

export class WebhookSecrets {
  private readonly key: Buffer;

  constructor(rootSecret: Uint8Array) {
    this.key = deriveKey(rootSecret, 'outbound-webhook-secrets');
  }

  seal(orgId: string, webhookId: string, secret: string): string {
    return seal(this.key, secret, `${orgId}/${webhookId}`);
  }

  open(orgId: string, webhookId: string, sealed: string): string {
    return unseal(this.key, sealed, `${orgId}/${webhookId}`);
  }
}
