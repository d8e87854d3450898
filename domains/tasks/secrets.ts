/**
 * Webhook trigger secrets: `whsec_<32 alphanumeric>`, shown once at
 * creation (and at rotation), sealed at rest with a key derived from
 * JWT_SECRET, bound to the task id so a sealed value cannot be moved to
 * another task.
 */
import { deriveKey, randomAlphanumeric, seal, unseal } from '../../runtime/crypto.js';

export const newWebhookSecret = (): string => `whsec_${randomAlphanumeric(32)}`;
/** `whk_<32 alphanumeric>`: the public path id of `/hooks/:trigger_id` */
export const newTriggerId = (): string => `whk_${randomAlphanumeric(32)}`;
export const TRIGGER_ID_PATTERN = /^whk_[A-Za-z0-9]{32}$/;
/** what reads show instead of the secret */
export const MASKED_SECRET = 'whsec_********';

export class SecretBox {
  private readonly key: Buffer;

  constructor(jwtSecret: Uint8Array) {
    this.key = deriveKey(jwtSecret, 'task-webhook-secrets');
  }

  seal(taskId: string, secret: string): string {
    return seal(this.key, secret, `task:${taskId}`);
  }

  open(taskId: string, sealed: string): string {
    return unseal(this.key, sealed, `task:${taskId}`);
  }
}
