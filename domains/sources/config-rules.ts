/** Config rules of a source save that need no store: secrets never follow a moved endpoint, schedules are cron and need a sync. */
import type { LoadedPlugin } from '../../runtime/tools/registry.js';
import { ServiceError } from '../../runtime/errors.js';
import { assertEgressAllowed, type EgressGuard } from '../../runtime/net/egress.js';
import { validateCopy, type SchemaIssue } from '../../runtime/tools/json-schema.js';
import { changedEndpoints, endpointValues, maskedPaths, restoreMasked } from './config-secrets.js';
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
  throw new ServiceError(
    'validation_error',
    `invalid body: ${moved.map((path) => `config.${path}`).join(', ')} changed, so the stored secrets are not reused: give ${fields.join(', ')} again`,
    {
      issues: fields.map((path) => ({ path, message: 'must be given again (not masked) when the endpoint changes' })),
      missing_secrets: fields,
      changed_endpoints: moved.map((path) => `config.${path}`),
    },
  );
}

export function checkedSchedule(plugin: LoadedPlugin, schedule: string): string {
  const trimmed = schedule.trim();
  const problem = scheduleProblem(trimmed);
  if (problem !== null) throw invalid('schedule', `not a valid cron expression: ${problem}`);
  if (trimmed !== '' && !plugin.plugin.sync) throw invalid('schedule', `connector ${plugin.kind} has no sync to schedule`);
  return trimmed;
}

/** schema issues as paths of the request body (`config.auth.kind`) */
export const configIssues = (issues: readonly SchemaIssue[]): { path: string; message: string }[] =>
  issues.map((issue) => ({ path: issue.path === '' ? 'config' : `config.${issue.path}`, message: issue.message }));

/** the config checked against the connector's schema, and its literal endpoint addresses against the egress guard */
export function checkedConfig(egress: Pick<EgressGuard, 'checkUrl'>, plugin: LoadedPlugin, config: Record<string, unknown>): Record<string, unknown> {
  // validated for the error, but stored as given: defaults are filled at use, so a later default change applies
  const checked = validateCopy(plugin.validateConfig, config);
  if (!checked.ok) {
    const issues = configIssues(checked.issues);
    throw new ServiceError('validation_error', `invalid body: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`, { issues });
  }
  // a refused literal address (127.0.0.1, 0x7f000001, [::1], 169.254.169.254) fails now; names fail when they resolve
  for (const [path, value] of endpointValues(config, plugin.plugin.configSchema)) {
    assertEgressAllowed(egress, URL.canParse(value) ? value : `http://${value}/`, `config.${path}`);
  }
  return config;
}
