/**
 * examples/provisioning/ as a user runs it, against the real server (feature
 * `policies` on): plan, apply (its outputs), a plan with no changes, destroy. The state goes
 * to a temporary file, so the example folder stays as it is in git.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { PROJECT_ROOT, runCli, type CliResult } from './run-cli.js';

const EXAMPLE = join(PROJECT_ROOT, 'examples', 'provisioning');
let server: TestServer;
let owner: Session;
let scratch: string;
beforeAll(async () => {
  ({ server, owner } = await oneOrg({ SERVICE_FEATURES_POLICIES: 'true' }, { name: 'Example Org' }));
  scratch = mkdtempSync(join(tmpdir(), 'provision-example-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const statePath = (): string => join(scratch, 'state.json');
const provision = (args: readonly string[]): Promise<CliResult> =>
  runCli(['provision', ...args, '--dir', EXAMPLE, '--state', statePath()], {
    env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token, TF_VAR_code_host_token: 'ghp_example_token' },
  });
const ok = async (args: readonly string[]): Promise<any> => {
  const result = await provision([...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
};

it('plans, applies, plans no changes and destroys the example folder', async () => {
  const plan = await ok(['plan']);
  expect(plan.summary).toEqual({ create: 12, update: 0, replace: 0, delete: 0 });
  const text = await provision(['plan']);
  expect(text.stdout).not.toContain('ghp_example_token');

  const applied = await ok(['apply']);
  const state = JSON.parse(readFileSync(statePath(), 'utf8'));
  const task = state.resources['service_task.deploy_failures'];
  // the outputs: the task's URL, its signing secret masked after apply and in clear by name
  expect(applied.outputs).toEqual({
    deploy_failures_url: task.attributes.webhook_url,
    deploy_failures_secret: '(sensitive)',
    alerts_url: state.resources['service_webhook.alerts'].attributes.url,
  });
  expect(task.attributes.webhook_secret).toMatch(/^whsec_[^*]+$/);
  const listed = await provision(['output']);
  expect(listed.stdout).toContain('deploy_failures_secret = "(sensitive)"');
  expect(listed.stdout).not.toContain(task.attributes.webhook_secret);
  const secret = await provision(['output', 'deploy_failures_secret']);
  expect(secret.code, secret.stderr).toBe(0);
  expect(secret.stdout.trim()).toBe(task.attributes.webhook_secret);
  const source = state.resources['service_source.code_host'];
  expect(task.attributes).toMatchObject({ trigger_type: 'webhook', source_ids: [source.id], response_channel: '#platform-alerts' });
  const morning = await server.request('GET', `/tasks/${state.resources['service_task.morning_summary'].id}`, { token: owner.token });
  expect(morning.body.input_template.instruction).toContain(task.attributes.webhook_url);
  expect(source.attributes).toMatchObject({ realm: 'platform', config: { auth: { token: 'ghp_example_token' } } });

  const again = await ok(['plan']);
  expect(again.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
  expect(again.drift).toEqual([]);

  await ok(['destroy']);
  expect(JSON.parse(readFileSync(statePath(), 'utf8')).resources).toEqual({});
  expect((await provision(['output', 'deploy_failures_secret'])).code).toBe(2);
  expect((await server.request('GET', `/tasks/${task.id}`, { token: owner.token })).status).toBe(404);
}, 240_000);
