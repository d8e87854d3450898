/** Config rules of a source save that need no store: secrets never follow a moved endpoint, schedules are cron and need a sync. */
import type { LoadedPlugin } from '../../runtime/tools/registry.js';
import { ServiceError } from '../../runtime/errors.js';
import { changedEndpoints, maskedPaths, restoreMasked } from './config-secrets.js';
import { scheduleProblem } from './sync-schedule.js';

/** 400 `validation_error` naming one body field */
export const invalid = (path: string, message: string): ServiceError =>
  new ServiceError('validation_error', `invalid body: ${path}: ${message}`, { issues: [{ path, message }] });

/**
 * Stored credentials never follow a changed endpoint: when an update moves a
 * URL-like field (base_url, url, host, ...), every secret must be given again,
 * not sent back masked, or the stored token would go to the new host.
 * @throws 400 validation_error naming each secret still masked
 */
export function checkSecretsFollowEndpoint(plugin: LoadedPlugin, next: Record<string, unknown>, stored: Record<string, unknown>): void {
  const masked = maskedPaths(next);
  if (masked.length === 0) return;
  const moved = changedEndpoints(restoreMasked(next, stored), stored, plugin.plugin.configSchema);
  if (moved.length === 0) return;
  const fields = masked.map((path) => `config.${path}`);
  throw new ServiceError('validation_error', `invalid body: ${moved.map((path) => `config.${path}`).join(', ')} changed, so the stored secrets are not reused: give ${fields.join(', ')} again`, {
    issues: fields.map((path) => ({ path, message: 'must be given again (not masked) when the endpoint changes' })),
    missing_secrets: fields,
    changed_endpoints: moved.map((path) => `config.${path}`),
  });
}

export function checkedSchedule(plugin: LoadedPlugin, schedule: string): string {
  const trimmed = schedule.trim();
  const problem = scheduleProblem(trimmed);
  if (problem !== null) throw invalid('schedule', `not a valid cron expression: ${problem}`);
  if (trimmed !== '' && !plugin.plugin.sync) throw invalid('schedule', `connector ${plugin.kind} has no sync to schedule`);
  return trimmed;
}
