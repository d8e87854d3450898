/**
 * What every signature scheme of `POST /hooks/:trigger_id` implements: one
 * small verifier per sender (this folder), chosen by the task's
 * `trigger.signature_scheme`. Verifiers compare raw bytes in constant time
 * and never parse the body.
 */

export const SIGNATURE_SCHEMES = ['service', 'github', 'vercel', 'standard_webhooks', 'slack', 'token'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export interface SignedRequest {
  /** lowercase names */
  readonly headers: Readonly<Record<string, string>>;
  /** the exact bytes received */
  readonly body: Buffer;
  readonly query?: URLSearchParams;
}

interface VerifyContext {
  /** the runtime clock (tests inject theirs) */
  readonly nowMs: number;
  /** `service`: `X-Service-Timestamp` signed with the body (opt-in) */
  readonly requireTimestamp: boolean;
  readonly toleranceSecs: number;
}

export type SchemeCheck = 'valid' | 'missing' | 'invalid' | 'stale_timestamp';

/** What the sender is configured with; the task's read model shows it as `trigger.webhook_signature`. */
interface SenderSetup {
  readonly scheme: SignatureScheme;
  /** the header carrying the signature (or token) */
  readonly header: string;
  /** every header the sender sends for it */
  readonly headers: readonly string[];
  readonly algorithm: string;
  /** how the header value is formed */
  readonly format: string;
  /** `service`: the whsec_ secret shown at creation; `sender`: the sender generates it and it is set as trigger.secret */
  readonly secret_source: 'service' | 'sender' | 'service_or_sender';
  readonly timestamp_tolerance_secs?: number;
}

export interface SignatureVerifier {
  /** `required`: the sender generates the secret, so the task needs trigger.secret; `allowed`: it may be given */
  readonly userSecret: 'required' | 'allowed' | 'refused';
  setup(context: Pick<VerifyContext, 'requireTimestamp' | 'toleranceSecs'>): SenderSetup;
  /** why a given secret cannot key this scheme, or null */
  secretProblem(secret: string): string | null;
  verify(secret: string, request: SignedRequest, context: VerifyContext): SchemeCheck;
  /** the 401 message of a failed check */
  failure(check: Exclude<SchemeCheck, 'valid'>, context: Pick<VerifyContext, 'toleranceSecs'>): string;
}

/** Unix seconds within the tolerance of the clock; false for a malformed value. */
export function timestampWithin(value: string | undefined, nowMs: number, toleranceSecs: number): boolean {
  const trimmed = value?.trim();
  if (trimmed === undefined || !/^\d{1,12}$/.test(trimmed)) return false;
  return Math.abs(nowMs / 1000 - Number(trimmed)) <= toleranceSecs;
}

/** A user-given secret: printable, no surrounding spaces, 16 to 512 characters. */
export function plainSecretProblem(secret: string): string | null {
  if (secret.length < 16 || secret.length > 512) return 'a secret has 16 to 512 characters';
  if (!/^[\x21-\x7e]+$/.test(secret)) return 'a secret is printable ASCII without spaces';
  return null;
}
