/**
 * Which request headers carry credentials or signatures, by name: the one
 * list the logger and the store of failed webhook deliveries both redact.
 */
export const REDACTED = '[redacted]';

const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-service-signature',
  'x-hub-signature',
  'x-hub-signature-256',
]);

/** also any vendor's signature or token header: `x-slack-signature`, `x-signature-ed25519`, `x-gitlab-token` */
function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || (lower.startsWith('x-') && (lower.includes('-signature') || lower.endsWith('-token')));
}

/** A copy of a header map with the values of secret headers replaced by `[redacted]`. */
export function redactHeaders<V>(headers: Readonly<Record<string, V>>): Record<string, V | string> {
  const out: Record<string, V | string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = isSecretHeader(name) ? REDACTED : value;
  return out;
}
