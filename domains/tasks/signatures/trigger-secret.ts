/**
 * Which secret a webhook trigger is saved with, by its signature scheme (the
 * rules of `trigger.secret` on create and update).
 */
import { ServiceError } from '../../../runtime/errors.js';
import { newWebhookSecret } from '../secrets.js';
import { verifierOf } from './index.js';
import type { SignatureScheme } from './types.js';

const secretError = (message: string): ServiceError =>
  new ServiceError('validation_error', `invalid body: trigger.secret: ${message}`, { issues: [{ path: 'trigger.secret', message }] });

/**
 * The secret a webhook trigger is saved with, checked against its scheme:
 * `trigger.secret` when given; at creation otherwise a generated whsec_ one
 * (unless the sender generates it: then it must be given); on update null
 * (unchanged), unless the scheme changes to one the current secret cannot
 * key. `current` opens the stored secret (update only).
 */
export function triggerSecret(
  value: { readonly signature_scheme?: SignatureScheme | undefined; readonly secret?: string | undefined },
  existing: { readonly scheme: SignatureScheme; readonly current: () => string | null } | null,
): { readonly secret: string; readonly generated: boolean } | null {
  const scheme = value.signature_scheme ?? existing?.scheme ?? 'service';
  const verifier = verifierOf(scheme);
  if (value.secret !== undefined) {
    if (verifier.userSecret === 'refused') {
      throw secretError(`the ${scheme} scheme uses the secret the service generates (rotate it with POST /tasks/:id/rotate-secret)`);
    }
    const problem = verifier.secretProblem(value.secret);
    if (problem !== null) throw secretError(problem);
    return { secret: value.secret, generated: false };
  }
  const required = `the ${scheme} sender generates its secret: give it as trigger.secret`;
  if (existing === null) {
    if (verifier.userSecret === 'required') throw secretError(required);
    return { secret: newWebhookSecret(), generated: true };
  }
  if (scheme === existing.scheme) return null;
  if (verifier.userSecret === 'required') throw secretError(required);
  const current = existing.current();
  const problem = current === null ? null : verifier.secretProblem(current);
  if (problem !== null) throw secretError(`the current secret cannot key the ${scheme} scheme (${problem}): give trigger.secret`);
  return null;
}
