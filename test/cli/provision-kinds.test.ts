/**
 * The nine kinds beside realm, agent, memory, role and settings, through the
 * CLI engine against the real server (feature `policies` on): create with
 * references between them (`service_source.gh.id`,
 * `service_task.deploys.webhook_url`), sensitive values kept in state and a
 * masked secret never showing as drift, update in place, replacement forced
 * by each immutable attribute, import, and destroy.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { runCli, type CliResult } from './run-cli.js';

let server: TestServer;
let owner: Session;
let folder: string;
beforeAll(async () => {
  ({ server, owner } = await oneOrg({ SERVICE_FEATURES_POLICIES: 'true' }, { name: 'Kinds Org' }));
  folder = mkdtempSync(join(tmpdir(), 'provision-kinds-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
});

const provision = (args: readonly string[], dir = folder): Promise<CliResult> =>
  runCli(['provision', ...args, '--dir', dir], { env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token } });
const ok = async (args: readonly string[], dir = folder): Promise<any> => {
  const result = await provision([...args, '--json'], dir);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
};
const write = (text: string, dir = folder): void => writeFileSync(join(dir, 'main.tf'), text);
const actions = (plan: any): Record<string, string> => Object.fromEntries(plan.changes.map((change: any) => [change.address, change.action]));
const stateOf = (dir = folder): any => JSON.parse(readFileSync(join(dir, 'service.tfstate.json'), 'utf8'));
const idOf = (address: string): string => stateOf().resources[address].id as string;
const get = async (path: string): Promise<any> => {
  const response = await server.request('GET', path, { token: owner.token });
  expect(response.status, `${path}: ${response.text}`).toBe(200);
  return response.body;
};
/** a delivery to a webhook task's URL, signed with `secret` as a sender does */
const hookPost = (url: string, secret: string) => {
  const body = '{"type":"deployment.failed"}';
  return server.request('POST', url.slice(url.indexOf('/api/v1') + '/api/v1'.length), {
    body,
    headers: { 'content-type': 'application/json', 'x-service-signature': signHmac(secret, Buffer.from(body)) },
  });
};
const statusOf = async (path: string): Promise<number> => (await server.request('GET', path, { token: owner.token })).status;
const NO_CHANGES = { create: 0, update: 0, replace: 0, delete: 0 };

const READ_ONLY = (name: string, message: string) =>
  `package service.${name}\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "${message}"\n}\n`;

/** the nine kinds; `v` picks the variant of each changeable value (1: first, 2: updated in place, 3: immutable ones changed) */
const config = (v: 1 | 2 | 3): string => `
variable "gh_token" {
  default = "${v === 1 ? 'ghp_first_secret_token' : 'ghp_second_secret_token'}"
}
resource "service_source" "gh" {
  name        = "${v === 1 ? 'code host' : 'code host (acme)'}"
  source_type = "${v === 3 ? 'vercel' : 'github'}"
  config      = ${v === 3 ? '{ token = var.gh_token, team_id = "team_acme" }' : '{ auth = { kind = "pat", token = var.gh_token }, orgs = ["acme"] }'}
}
resource "service_webhook" "alerts" {
  name             = "alerts"
  description      = "${v === 1 ? 'dashboard alerts' : 'dashboard and cluster alerts'}"
  payload_template = "Alert {{trigger.body.title}}"
  system_prompt    = "You triage alerts."
}
resource "service_skill" "triage" {
  name    = "Triage"
  slug    = "${v === 3 ? 'triage-v2' : 'triage'}"
  content = "${v === 1 ? 'Look at the failing build first.' : 'Look at the failing build, then the deployment.'}"
  tags    = ["ops"]
}
resource "service_api_key" "ci" {
  name            = "${v === 1 ? 'ci' : 'ci pipeline'}"
  permissions     = ["graph:read"]
  source_ids      = [service_source.gh.id]
  expires_in_days = ${v === 3 ? 60 : 30}
}
resource "service_task" "deploys" {
  name             = "deploy failures"
  trigger_type     = "webhook"
  message_template = "Diagnose the failed deployment {{trigger.body.type}}"
  system_prompt    = "You diagnose deployments."
  response_channel = "${v === 1 ? '#ops' : '#deploys'}"
  source_ids       = [service_source.gh.id]
}
resource "service_task" "morning" {
  name             = "morning summary"
  ${v === 3 ? 'trigger_type     = "webhook"' : `cron_expression  = "${v === 1 ? '0 8 * * 1-5' : '30 8 * * 1-5'}"\n  timezone         = "Europe/Paris"`}
  message_template = "Summarize stale pull requests; failures arrive at \${service_task.deploys.webhook_url}"
  is_active        = ${v === 1 ? 'true' : 'false'}
}
resource "service_policy" "readonly" {
  name      = "${v === 3 ? 'read_only_v2' : 'read_only'}"
  rego_code = ${JSON.stringify(READ_ONLY(v === 3 ? 'read_only_v2' : 'read_only', v === 1 ? 'read-only' : 'read-only: ask a human'))}
}
resource "service_policy_source" "shared" {
  name        = "${v === 3 ? 'shared-v2' : 'shared'}"
  source_type = "inline"
  modules     = { "lib/tools.rego" = ${JSON.stringify(`package lib.tools\n\nwrites := {"memory.store"${v === 1 ? '' : ', "files.write"'}}\n`)} }
}
resource "service_policy_source" "repo" {
  name        = "repo"
  source_type = "git_repo"
  git_url     = "git@github.com:acme/policies.git"
  git_path    = "${v === 1 ? 'rego' : 'policies'}"
  git_ssh_key = "-----BEGIN OPENSSH PRIVATE KEY-----\\nfake\\n-----END OPENSSH PRIVATE KEY-----"
}
resource "service_channel" "ops" {
  channel_type  = "slack"
  display_name  = "${v === 1 ? 'Ops' : 'Ops room'}"
  response_mode = "${v === 1 ? 'agent' : 'enabled'}"
  source_ids    = [service_source.gh.id]
}
resource "service_gateway" "engine" {
  name        = "engine"
  engine_type = "${v === 3 ? 'temporal' : 'webhook'}"
  base_url    = "${v === 1 ? 'https://orchestrator.example.test' : 'https://orchestrator2.example.test'}"
  api_key     = "${v === 1 ? 'gw-first-key-0123456789' : 'gw-second-key-abcdefghij'}"
  context     = ${v === 3 ? '{ task_queue = "agents", workflow_type = "RunAgent" }' : '{ team = "ops" }'}
}
`;

const ALL = [
  'service_source.gh',
  'service_webhook.alerts',
  'service_skill.triage',
  'service_api_key.ci',
  'service_task.deploys',
  'service_task.morning',
  'service_policy.readonly',
  'service_policy_source.shared',
  'service_policy_source.repo',
  'service_channel.ops',
  'service_gateway.engine',
];

describe('the nine kinds through the CLI engine', () => {
  it('creates them with references between them; secrets stay in state and out of plans; a plan after apply shows no changes', async () => {
    write(config(1));
    const text = await provision(['plan']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Plan: 11 to create, 0 to update, 0 to replace, 0 to delete.');
    for (const secret of ['ghp_first_secret_token', 'gw-first-key-0123456789', 'OPENSSH']) expect(text.stdout).not.toContain(secret);
    const plan = await ok(['plan']);
    const order = plan.changes.map((change: any) => change.address);
    expect(order.indexOf('service_source.gh')).toBeLessThan(order.indexOf('service_api_key.ci'));
    expect(order.indexOf('service_task.deploys')).toBeLessThan(order.indexOf('service_task.morning'));

    const applied = await ok(['apply']);
    expect(applied.applied).toHaveLength(11);
    const state = stateOf();
    const sourceId = idOf('service_source.gh');

    // source: config in state as applied, masked on the API
    expect(state.resources['service_source.gh'].attributes).toMatchObject({
      source_type: 'github',
      realm: 'default',
      status: 'pending',
      config: { auth: { kind: 'pat', token: 'ghp_first_secret_token' }, orgs: ['acme'] },
    });
    expect(await get(`/sources/${sourceId}`)).toMatchObject({ connector: 'github', config: { auth: { kind: 'pat', token: '********' } } });

    // webhook: its secret answered once, kept in state; the API never shows it again
    const hook = state.resources['service_webhook.alerts'].attributes;
    expect(hook.secret_token).toMatch(/^whsec_/);
    expect(hook.url).toContain(`/hooks/${hook.slug}`);
    expect(await get(`/inbound-webhooks/${idOf('service_webhook.alerts')}`)).toMatchObject({ description: 'dashboard alerts', slug: hook.slug });

    // api key: the key works as a bearer token and is scoped to the source
    const key = state.resources['service_api_key.ci'].attributes;
    expect(typeof key.key).toBe('string');
    expect(await get(`/api-keys/${idOf('service_api_key.ci')}`)).toMatchObject({ name: 'ci', source_ids: [sourceId], expires_in_days: 30, active: true });
    expect((await server.request('GET', '/realms', { token: key.key })).status).not.toBe(401);

    // tasks: the webhook one answers its URL; the schedule one names it (a reference) and reads cron in its zone
    const deploys = state.resources['service_task.deploys'].attributes;
    expect(deploys).toMatchObject({ trigger_type: 'webhook', cron_expression: null, source_ids: [sourceId], response_channel: '#ops' });
    expect(deploys.webhook_url).toBe(`${server.url}/hooks/${deploys.webhook_slug}`);
    // its signing secret: answered once by the create, kept in state, never in a plan; a sender signing with it is accepted
    expect(deploys.webhook_secret).toMatch(/^whsec_[^*]+$/);
    const listed = await provision(['state', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`service_task.deploys  ${idOf('service_task.deploys')}`);
    const shownState = await provision(['state', 'show', 'service_task.deploys']);
    expect(shownState.code, shownState.stderr).toBe(0);
    expect(shownState.stdout).toContain('webhook_secret = (sensitive)');
    expect(shownState.stdout).not.toContain(deploys.webhook_secret);
    expect((await get(`/tasks/${idOf('service_task.deploys')}`)).trigger.secret).toBe('whsec_********');
    expect((await hookPost(deploys.webhook_url, deploys.webhook_secret)).status).toBe(202);
    expect((await hookPost(deploys.webhook_url, 'whsec_not_the_secret')).status).toBe(401);
    expect(state.resources['service_task.morning'].attributes.webhook_secret).toBeNull();
    const morning = await get(`/tasks/${idOf('service_task.morning')}`);
    expect(morning).toMatchObject({
      trigger: { kind: 'schedule', cron: '0 8 * * 1-5', timezone: 'Europe/Paris' },
      input_template: { instruction: `Summarize stale pull requests; failures arrive at ${deploys.webhook_url}` },
      enabled: true,
    });
    expect((await get(`/tasks/${idOf('service_task.deploys')}`)).input_template).toEqual({
      instruction: 'Diagnose the failed deployment {{trigger.body.type}}',
      response_channel: '#ops',
    });

    expect(await get(`/skills/${idOf('service_skill.triage')}`)).toMatchObject({ slug: 'triage', status: 'draft', tags: ['ops'], scope: 'org' });
    expect(await get(`/policies/${idOf('service_policy.readonly')}`)).toMatchObject({ name: 'read_only', package_path: 'service.read_only', enabled: true });
    expect(await get(`/policies/sources/${idOf('service_policy_source.repo')}`)).toMatchObject({ git_path: 'rego', git_ssh_key: '********' });
    expect(state.resources['service_policy_source.repo'].attributes.git_ssh_key).toContain('OPENSSH');
    expect(await get(`/channels/${idOf('service_channel.ops')}`)).toMatchObject({ display_name: 'Ops', source_ids: [sourceId], response_mode: 'agent' });
    const gateway = await get(`/gateways/${idOf('service_gateway.engine')}`);
    expect(gateway).toMatchObject({ engine_type: 'webhook', api_key: '****6789', context: { team: 'ops' } });
    expect(state.resources['service_gateway.engine'].attributes).toMatchObject({ api_key: 'gw-first-key-0123456789', last_health_status: 'unknown' });

    // the server changes a computed attribute by itself: a health probe (the engine's host does not resolve: down)
    const probed = await server.request('POST', `/gateways/${idOf('service_gateway.engine')}/test`, { token: owner.token });
    expect(probed.body.last_health_status).toBe('down');
    // neither that nor the masked secrets (source config, ssh key, gateway key, webhook and api key secrets) are drift
    const again = await ok(['plan']);
    expect(again.drift).toEqual([]);
    expect(again.summary).toEqual(NO_CHANGES);
    const text2 = await provision(['plan']);
    expect(text2.stdout).toContain('No changes');
    expect(text2.stdout).not.toContain('Changed outside');
    // the refreshed value is taken into the state by the next apply
    await ok(['apply']);
    expect(stateOf().resources['service_gateway.engine'].attributes.last_health_status).toBe('down');
  }, 300_000);

  it('updates every kind in place (a new secret inside the source config included)', async () => {
    const before = Object.fromEntries(ALL.map((address) => [address, idOf(address)]));
    const secretBefore = stateOf().resources['service_webhook.alerts'].attributes.secret_token;
    const taskSecretBefore = stateOf().resources['service_task.deploys'].attributes.webhook_secret;
    write(config(2));
    const plan = await ok(['plan']);
    expect(actions(plan)).toEqual(Object.fromEntries(ALL.map((address) => [address, 'update'])));
    const source = plan.changes.find((change: any) => change.address === 'service_source.gh');
    expect(source.attributes).toContainEqual({ name: 'config', before: '(sensitive)', after: '(sensitive)' });
    await ok(['apply']);
    const state = stateOf();
    for (const address of ALL) expect(state.resources[address].id, address).toBe(before[address]);
    expect(state.resources['service_webhook.alerts'].attributes.secret_token).toBe(secretBefore);
    expect(state.resources['service_task.deploys'].attributes.webhook_secret).toBe(taskSecretBefore);
    expect(state.resources['service_source.gh'].attributes.config.auth.token).toBe('ghp_second_secret_token');
    expect(await get(`/sources/${before['service_source.gh']}`)).toMatchObject({ name: 'code host (acme)' });
    expect(await get(`/inbound-webhooks/${before['service_webhook.alerts']}`)).toMatchObject({ description: 'dashboard and cluster alerts' });
    expect(await get(`/skills/${before['service_skill.triage']}`)).toMatchObject({ content: 'Look at the failing build, then the deployment.' });
    expect(await get(`/api-keys/${before['service_api_key.ci']}`)).toMatchObject({ name: 'ci pipeline' });
    expect(await get(`/tasks/${before['service_task.morning']}`)).toMatchObject({
      trigger: { cron: '30 8 * * 1-5', timezone: 'Europe/Paris' },
      enabled: false,
    });
    expect((await get(`/tasks/${before['service_task.deploys']}`)).input_template).toMatchObject({ response_channel: '#deploys' });
    expect((await get(`/policies/${before['service_policy.readonly']}`)).rego_code).toContain('ask a human');
    expect((await get(`/policies/sources/${before['service_policy_source.shared']}`)).modules[0].rego).toContain('files.write');
    expect(await get(`/policies/sources/${before['service_policy_source.repo']}`)).toMatchObject({ git_path: 'policies', git_ssh_key: '********' });
    expect(await get(`/channels/${before['service_channel.ops']}`)).toMatchObject({ display_name: 'Ops room', response_mode: 'enabled' });
    expect(await get(`/gateways/${before['service_gateway.engine']}`)).toMatchObject({
      base_url: 'https://orchestrator2.example.test',
      api_key: '****ghij',
    });
    expect((await ok(['plan'])).summary).toEqual(NO_CHANGES);
  }, 300_000);

  it('shows drift in a plain field of a masked config, and a gateway key changed outside', async () => {
    const sourceId = idOf('service_source.gh');
    await server.request('PATCH', `/sources/${sourceId}`, {
      token: owner.token,
      body: { config: { auth: { kind: 'pat', token: '********' }, orgs: ['acme', 'other'] } },
    });
    await server.request('PATCH', `/gateways/${idOf('service_gateway.engine')}`, { token: owner.token, body: { api_key: 'rotated-by-hand-0000' } });
    const plan = await ok(['plan']);
    const moved = plan.drift.flatMap((drift: any) => drift.attributes.map((name: string) => `${drift.address}.${name}`));
    expect(moved.sort()).toEqual(['service_gateway.engine.api_key', 'service_source.gh.config']);
    expect(actions(plan)).toMatchObject({ 'service_source.gh': 'update', 'service_gateway.engine': 'update', 'service_skill.triage': 'noop' });
    const text = await provision(['plan']);
    expect(text.stdout).not.toContain('ghp_second_secret_token');
    expect(text.stdout).not.toContain('rotated-by-hand');
    await ok(['apply']);
    expect((await get(`/sources/${sourceId}`)).config.orgs).toEqual(['acme']);
    expect((await get(`/gateways/${idOf('service_gateway.engine')}`)).api_key).toBe('****ghij');
    expect((await ok(['plan'])).summary).toEqual(NO_CHANGES);
  }, 300_000);

  it('replaces a resource when one of its immutable attributes changes; dependents follow the new ids', async () => {
    const before = Object.fromEntries(ALL.map((address) => [address, idOf(address)]));
    write(config(3));
    const plan = await ok(['plan']);
    const forced = Object.fromEntries(
      plan.changes.filter((change: any) => change.action === 'replace').map((change: any) => [change.address, change.forced_by]),
    );
    expect(forced).toEqual({
      'service_source.gh': ['source_type'],
      'service_skill.triage': ['slug'],
      'service_api_key.ci': ['expires_in_days'],
      'service_task.morning': ['trigger_type'],
      'service_policy.readonly': ['name'],
      'service_policy_source.shared': ['name'],
      'service_gateway.engine': ['engine_type'],
    });
    expect((await provision(['plan'])).stdout).toContain('# forces replacement');
    await ok(['apply']);
    const state = stateOf();
    const sourceId = idOf('service_source.gh');
    for (const address of Object.keys(forced)) expect(state.resources[address].id, address).not.toBe(before[address]);
    for (const [address, path] of [
      ['service_source.gh', '/sources'],
      ['service_skill.triage', '/skills'],
      ['service_task.morning', '/tasks'],
      ['service_policy.readonly', '/policies'],
      ['service_policy_source.shared', '/policies/sources'],
      ['service_gateway.engine', '/gateways'],
    ] as const) {
      expect(await statusOf(`${path}/${before[address]}`), address).toBe(404);
    }
    // an API key is revoked, not deleted
    expect(await get(`/api-keys/${before['service_api_key.ci']}`)).toMatchObject({ active: false });
    expect(await get(`/sources/${sourceId}`)).toMatchObject({ connector: 'vercel', config: { token: '********', team_id: 'team_acme' } });
    expect(await get(`/tasks/${idOf('service_task.deploys')}`)).toMatchObject({ enabled_source_ids: [sourceId] });
    expect(await get(`/channels/${idOf('service_channel.ops')}`)).toMatchObject({ source_ids: [sourceId] });
    expect(await get(`/api-keys/${idOf('service_api_key.ci')}`)).toMatchObject({ source_ids: [sourceId], expires_in_days: 60, active: true });
    expect(state.resources['service_task.morning'].attributes).toMatchObject({
      trigger_type: 'webhook',
      webhook_url: expect.stringContaining('/hooks/'),
      webhook_secret: expect.stringMatching(/^whsec_[^*]+$/),
    });
    expect(await get(`/gateways/${idOf('service_gateway.engine')}`)).toMatchObject({ engine_type: 'temporal' });
    expect((await ok(['plan'])).summary).toEqual(NO_CHANGES);
  }, 300_000);

  it('replaces a channel: a channel_type the catalog lacks stops the plan; --replace deletes and creates it', async () => {
    const before = idOf('service_channel.ops');
    // the catalog holds one channel type (slack): a change of channel_type is refused at plan time, before the old channel goes
    const catalog = await get('/channels/catalog');
    expect(catalog.items.map((item: any) => item.channel_type)).toEqual(['slack']);
    write(config(3).replace('channel_type  = "slack"', 'channel_type  = "teams"'));
    for (const command of ['plan', 'apply']) {
      const refused = await provision([command]);
      expect(refused.code, refused.stdout).toBe(2);
      expect(refused.stderr).toContain('channel_type "teams" is not in the channel catalog (known: slack)');
    }
    expect(await statusOf(`/channels/${before}`)).toBe(200);
    expect(idOf('service_channel.ops')).toBe(before);

    // the same replacement path a type change takes, asked for by address (Terraform's -replace)
    write(config(3));
    const text = await provision(['plan', '--replace', 'service_channel.ops']);
    expect(text.stdout).toContain('service_channel.ops: replace (asked for with --replace)');
    const plan = await ok(['plan', '--replace', 'service_channel.ops']);
    expect(plan.summary).toEqual({ ...NO_CHANGES, replace: 1 });
    const applied = await ok(['apply', '--replace', 'service_channel.ops']);
    expect(applied.applied).toEqual([{ address: 'service_channel.ops', action: 'replace', id: expect.any(String) }]);
    const after = idOf('service_channel.ops');
    expect(after).not.toBe(before);
    expect(await statusOf(`/channels/${before}`)).toBe(404);
    expect(await get(`/channels/${after}`)).toMatchObject({ channel_type: 'slack', display_name: 'Ops room', response_mode: 'enabled' });
    expect((await ok(['plan'])).summary).toEqual(NO_CHANGES);
    const unknown = await provision(['plan', '--replace', 'service_channel.nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--replace service_channel.nope: only a resource both in the configuration and in the state can be replaced');
  }, 120_000);

  it('refuses Rego that does not compile at plan time, before anything changes', async () => {
    write(config(3).replace('deny contains msg if {', 'deny contains msg if { ((( '));
    const result = await provision(['plan']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('rego_code does not compile');
    write(config(3));
  }, 60_000);

  it('refuses an output that shows a sensitive value unless it is marked sensitive', async () => {
    write(`${config(3)}\noutput "leak" {\n  value = "secret: \${service_task.deploys.webhook_secret}"\n}\n`);
    const refused = await provision(['plan']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('output "leak" shows the sensitive value service_task.deploys.webhook_secret: mark the output sensitive = true');
    write(`${config(3)}\noutput "leak" {\n  value     = service_task.deploys.webhook_secret\n  sensitive = true\n}\n`);
    const applied = await ok(['apply']);
    expect(applied.outputs).toEqual({ leak: '(sensitive)' });
    expect((await provision(['output', 'leak'])).stdout.trim()).toBe(stateOf().resources['service_task.deploys'].attributes.webhook_secret);
    write(config(3));
  }, 60_000);

  it('destroys them all: a revoked API key reads as gone, the rest answer 404', async () => {
    const before = Object.fromEntries(ALL.map((address) => [address, idOf(address)]));
    await ok(['destroy']);
    expect(stateOf().resources).toEqual({});
    for (const [address, path] of [
      ['service_source.gh', '/sources'],
      ['service_webhook.alerts', '/inbound-webhooks'],
      ['service_skill.triage', '/skills'],
      ['service_task.deploys', '/tasks'],
      ['service_task.morning', '/tasks'],
      ['service_policy.readonly', '/policies'],
      ['service_policy_source.shared', '/policies/sources'],
      ['service_policy_source.repo', '/policies/sources'],
      ['service_channel.ops', '/channels'],
      ['service_gateway.engine', '/gateways'],
    ] as const) {
      expect(await statusOf(`${path}/${before[address]}`), address).toBe(404);
    }
    expect(await get(`/api-keys/${before['service_api_key.ci']}`)).toMatchObject({ active: false });
  }, 300_000);
});

describe('import', () => {
  it('imports objects made through the API; a plan then shows only what state cannot know (a source config the API masks)', async () => {
    const other = mkdtempSync(join(tmpdir(), 'provision-import-'));
    try {
      const made = async (path: string, body: Record<string, unknown>): Promise<string> => {
        const response = await server.request('POST', path, { token: owner.token, body });
        expect(response.status, `${path}: ${response.text}`).toBe(201);
        return response.body.id as string;
      };
      const ids: Record<string, string> = {
        'service_source.gh': await made('/sources', { name: 'imported', connector: 'github', config: { auth: { kind: 'pat', token: 'ghp_imported' } } }),
        'service_webhook.alerts': await made('/inbound-webhooks', { name: 'imported hook', payload_template: 'Alert {{trigger.body.title}}' }),
        'service_skill.triage': await made('/skills', { name: 'Imported', slug: 'imported' }),
        'service_api_key.ci': await made('/api-keys', { name: 'imported key', permissions: ['graph:read'] }),
        'service_task.nightly': await made('/tasks', {
          name: 'nightly',
          trigger: { kind: 'schedule', cron: '0 2 * * *' },
          input_template: { instruction: 'Nightly digest' },
        }),
        'service_policy.readonly': await made('/policies', { name: 'imported_policy', rego_code: READ_ONLY('imported_policy', 'no') }),
        'service_policy_source.shared': await made('/policies/sources', {
          name: 'imported-lib',
          source_type: 'inline',
          modules: [{ path: 'lib.rego', rego: 'package lib.imported\n\nx := 1\n' }],
        }),
        'service_channel.ops': await made('/channels', { channel_type: 'slack', display_name: 'Imported' }),
        'service_gateway.engine': await made('/gateways', {
          name: 'imported',
          engine_type: 'webhook',
          base_url: 'https://wf.example.test',
          api_key: 'imported-key-0123456789',
        }),
      };
      write(
        `
resource "service_source" "gh" {
  name        = "imported"
  source_type = "github"
  config      = { auth = { kind = "pat", token = "ghp_imported" } }
}
resource "service_webhook" "alerts" {
  name             = "imported hook"
  payload_template = "Alert {{trigger.body.title}}"
}
resource "service_skill" "triage" {
  name = "Imported"
  slug = "imported"
}
resource "service_api_key" "ci" {
  name        = "imported key"
  permissions = ["graph:read"]
}
resource "service_task" "nightly" {
  name             = "nightly"
  cron_expression  = "0 2 * * *"
  message_template = "Nightly digest"
}
resource "service_policy" "readonly" {
  name      = "imported_policy"
  rego_code = ${JSON.stringify(READ_ONLY('imported_policy', 'no'))}
}
resource "service_policy_source" "shared" {
  name        = "imported-lib"
  source_type = "inline"
  modules     = { "lib.rego" = "package lib.imported\\n\\nx := 1\\n" }
}
resource "service_channel" "ops" {
  channel_type = "slack"
  display_name = "Imported"
}
resource "service_gateway" "engine" {
  name        = "imported"
  engine_type = "webhook"
  base_url    = "https://wf.example.test"
  api_key     = "imported-key-0123456789"
}
`,
        other,
      );
      for (const [address, id] of Object.entries(ids)) expect(await ok(['import', address, id], other)).toEqual({ address, id });
      const plan = await ok(['plan'], other);
      // the API masks the secrets: state cannot know them, so apply writes them once
      expect(actions(plan)).toEqual({
        'service_source.gh': 'update',
        'service_webhook.alerts': 'noop',
        'service_skill.triage': 'noop',
        'service_api_key.ci': 'noop',
        'service_task.nightly': 'noop',
        'service_policy.readonly': 'noop',
        'service_policy_source.shared': 'noop',
        'service_channel.ops': 'noop',
        'service_gateway.engine': 'update',
      });
      await ok(['apply'], other);
      expect((await ok(['plan'], other)).summary).toEqual(NO_CHANGES);
      expect(stateOf(other).resources['service_gateway.engine'].id).toBe(ids['service_gateway.engine']);
      await ok(['destroy'], other);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 600_000);
});
