import { pino, type DestinationStream, type Logger } from 'pino';
import type { ServiceConfig } from './config.js';

const REDACTED = '[redacted]';

/** Header names whose values are credentials or signatures (lowercase, as the transport gives them). */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-service-signature', 'x-hub-signature', 'x-hub-signature-256']);

/** also any vendor's signature or token header: `x-slack-signature`, `x-signature-ed25519`, `x-gitlab-token` */
const isSecretHeader = (name: string): boolean => {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || (lower.startsWith('x-') && lower.includes('-signature')) || lower.endsWith('-token');
};

/** A copy of a header map with credential and signature values replaced. */
export function redactHeaders(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = isSecretHeader(name) ? REDACTED : value;
  return out;
}

/**
 * Structured JSON logs on stdout (or `destination`, which tests read);
 * secrets never reach a log line: values redacted by path, header maps by
 * name, and request paths by their route's `secretParams` (gateway/log-path.ts).
 */
export function createLogger(config: Pick<ServiceConfig, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'agent-context-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', '*.password', '*.token', '*.secret', '*.api_key', '*.signing_secret'], censor: REDACTED },
    serializers: { headers: redactHeaders },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
