/**
 * A webhook task's secret after creation: set by hand in a patch, or rotated
 * (the service draws a new one and the replaced one keeps verifying for an
 * overlap, so senders can switch without dropping deliveries).
 */
import { conflict } from '../../runtime/errors.js';
import { newWebhookSecret, type SecretBox } from './secrets.js';
import { verifierOf } from './signatures/index.js';
import { triggerSecret } from './signatures/trigger-secret.js';
import type { TriggerInput } from './task-fields.js';
import type { TaskDoc } from './types.js';

/** how long the replaced secret keeps verifying after a rotation, unless the caller says otherwise */
const DEFAULT_ROTATION_OVERLAP_SECS = 3600;

type SecretFields = Pick<TaskDoc, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>;

/**
 * The secret fields a patch's webhook trigger changes (none when it keeps
 * the secret): a secret set by hand replaces the old one at once (the sender
 * changed it already).
 */
export function patchedSecret(existing: TaskDoc, trigger: Extract<TriggerInput, { kind: 'webhook' }>, secrets: SecretBox): Partial<SecretFields> {
  const sealed = existing.secret_sealed;
  const given = triggerSecret(trigger, {
    scheme: existing.signature_scheme ?? 'service',
    current: () => (sealed === null ? null : secrets.open(existing.id, sealed)),
  });
  if (given === null) return {};
  return { secret_sealed: secrets.seal(existing.id, given.secret), previous_secret_sealed: null, previous_secret_expires_at: null };
}

/**
 * A new generated secret for a webhook task (its plaintext, shown only in
 * the answer) and the fields that store it; 409 when the task has no secret
 * or its sender generates it.
 */
export function rotatedSecret(
  task: TaskDoc,
  secrets: SecretBox,
  nowMs: number,
  overlapSecs = DEFAULT_ROTATION_OVERLAP_SECS,
): { readonly secret: string; readonly fields: SecretFields } {
  if (task.trigger_kind !== 'webhook' || task.secret_sealed === null) throw conflict('only webhook tasks have a secret', { kind: task.trigger_kind });
  const scheme = task.signature_scheme ?? 'service';
  if (verifierOf(scheme).userSecret === 'required') {
    throw conflict(`the ${scheme} sender generates this secret: set the new one with PATCH /tasks/:id {trigger: {kind: "webhook", secret}}`, {
      signature_scheme: scheme,
    });
  }
  const secret = newWebhookSecret();
  const overlapMs = overlapSecs * 1000;
  return {
    secret,
    fields: {
      secret_sealed: secrets.seal(task.id, secret),
      previous_secret_sealed: overlapMs > 0 ? task.secret_sealed : null,
      previous_secret_expires_at: overlapMs > 0 ? new Date(nowMs + overlapMs).toISOString() : null,
    },
  };
}
