import { pino, type DestinationStream, type Logger } from 'pino';
import type { ServiceConfig } from './config.js';
import { REDACTED, redactHeaders } from './secret-headers.js';

/** A logged header map (any `headers` field) with credential and signature values replaced. */
function headersSerializer(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return headers;
  return redactHeaders(Object.fromEntries(Object.entries(headers)));
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
    serializers: { headers: headersSerializer },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
