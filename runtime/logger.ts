import { pino, type Logger } from 'pino';
import type { ServiceConfig } from './config.js';

/** Structured JSON logs on stdout; secrets never reach a log line (redacted by path). */
export function createLogger(config: Pick<ServiceConfig, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'agent-context-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['req.headers.authorization', '*.password', '*.token', '*.secret', '*.api_key'],
  });
}
