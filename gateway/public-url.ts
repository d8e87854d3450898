/**
 * The service's public base URL (no `/api/v1`), for absolute URLs a user
 * pastes into a sender (task webhook URLs, Slack's request URLs):
 * PUBLIC_URL when configured, else the address the caller reached.
 */
import type { ServiceConfig } from '../runtime/config.js';
import type { HttpRequest } from './http.js';

export function publicBaseUrl(config: Pick<ServiceConfig, 'publicUrl' | 'host' | 'port'>, request: HttpRequest): string {
  if (config.publicUrl !== null) return config.publicUrl;
  const host = request.headers['x-forwarded-host'] ?? request.headers['host'] ?? `${config.host}:${config.port}`;
  const proto = request.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  return `${proto}://${host}`;
}
