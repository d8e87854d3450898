/**
 * `service-proxy-cli provision` against the real server: plan, apply, a plan
 * after apply with no changes, update in place, replacement forced by an
 * immutable attribute, drift, import, destroy, the state file's mode and
 * lock, and an apply that stops at its first failure with a true state.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { runCli, type CliResult } from './run-cli.js';

let server: TestServer;
let owner: Session;
let folder: string;
beforeAll(async () => {
  ({ server, owner } = await oneOrg({}, { name: 'Provisioned Org' }));
  folder = mkdtempSync(join(tmpdir(), 'provision-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
});

const provision = (args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> =>
  runCli(['provision', ...args, '--dir', folder], { env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token, ...env } });
const ok = async (args: readonly string[], env: Record<string, string> = {}): Promise<any> => {
  const result = await provision([...args, '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
};
const write = (text: string): void => writeFileSync(join(folder, 'main.tf'), text);
const actions = (plan: any): Record<string, string> => Object.fromEntries(plan.changes.map((change: any) => [change.address, change.action]));
const statePath = (): string => join(folder, 'service.tfstate.json');
const stateOf = (): any => JSON.parse(readFileSync(statePath(), 'utf8'));
const get = async (path: string): Promise<any> => (await server.request('GET', path, { token: owner.token })).body;

const config = (realmName: string, displayName: string, extra = ''): string => `
variable "team" {
  default = "${realmName}"
}
resource "service_realm" "ops" {
  name         = var.team
  display_name = "${displayName}"
}
resource "service_memory" "runbook" {
  content = "Restart the ingest worker with systemctl restart ingest"
  title   = "Ingest restarts on \${service_realm.ops.display_name}"
  tags    = ["runbook"]
  realm   = service_realm.ops.name
}
resource "service_agent" "helper" {
  agent_type = "assistant"
  name       = "helper"
}
resource "service_role" "reader" {
  name        = "reader"
  description = "reads the graph of realm \${service_realm.ops.id}"
  permissions = ["graph:read"]
}
resource "service_settings" "org" {
  approval_timeout_secs = 600
  llm_api_key           = "sk-provisioned-secret"
  llm_base_url          = "https://llm.example.test/v1"
}
data "service_permissions" "all" {}
${extra}`;

describe('plan and apply', () => {
  it('plans the creates in dependency order, applies them, and plans nothing more', async () => {
    write(config('ops', 'Operations'));
    const plan = await ok(['plan']);
    expect(plan.summary).toEqual({ create: 5, update: 0, replace: 0, delete: 0 });
    const order = plan.changes.map((change: any) => change.address);
    expect(order.indexOf('service_realm.ops')).toBeLessThan(order.indexOf('service_memory.runbook'));
    const memory = plan.changes.find((change: any) => change.address === 'service_memory.runbook');
    // a value set in configuration is known at plan time; a computed one is not
    expect(memory.attributes).toContainEqual({ name: 'realm', before: null, after: 'ops' });
    const role = plan.changes.find((change: any) => change.address === 'service_role.reader');
    expect(role.attributes).toContainEqual({ name: 'description', before: null, after: '(known after apply)' });
    const settings = plan.changes.find((change: any) => change.address === 'service_settings.org');
    expect(settings.attributes).toContainEqual({ name: 'llm_api_key', before: '(sensitive)', after: '(sensitive)' });

    const text = await provision(['plan']);
    expect(text.stdout).toContain('+ service_realm.ops: create');
    expect(text.stdout).toContain('Plan: 5 to create, 0 to update, 0 to replace, 0 to delete.');
    expect(text.stdout).not.toContain('sk-provisioned-secret');

    const applied = await ok(['apply']);
    expect(applied.applied).toHaveLength(5);
    expect(statSync(statePath()).mode & 0o777).toBe(0o600);
    expect(existsSync(`${statePath()}.lock`)).toBe(false);
    const state = stateOf();
    // sensitive values are kept in state, as the spec says
    expect(state.resources['service_settings.org']).toMatchObject({
      id: 'org-settings',
      attributes: { llm_api_key: 'sk-provisioned-secret', approval_timeout_secs: 600 },
    });

    const realm = await get(`/realms/${state.resources['service_realm.ops'].id}`);
    expect(realm).toMatchObject({ name: 'ops', display_name: 'Operations' });
    const entry = await get(`/memory/${state.resources['service_memory.runbook'].id}`);
    expect(entry).toMatchObject({ realm: 'ops', kind: 'guideline', title: 'Ingest restarts on Operations', tags: ['runbook'] });
    expect(await get('/settings')).toMatchObject({ approval_timeout_secs: 600, llm_api_key: '********', llm_base_url: 'https://llm.example.test/v1' });

    const again = await ok(['plan']);
    expect(again.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
    expect((await provision(['plan'])).stdout).toContain('No changes');
  }, 120_000);

  it('updates in place, and replaces when an immutable attribute changes (its dependents follow)', async () => {
    write(config('ops', 'Ops team'));
    const update = await ok(['plan']);
    expect(actions(update)).toMatchObject({
      'service_realm.ops': 'update',
      'service_memory.runbook': 'update',
      'service_agent.helper': 'noop',
      'service_role.reader': 'noop',
    });
    await ok(['apply']);
    expect(await get(`/realms/${stateOf().resources['service_realm.ops'].id}`)).toMatchObject({ display_name: 'Ops team' });

    const oldRealm = stateOf().resources['service_realm.ops'].id;
    write(config('platform', 'Ops team'));
    const replace = await ok(['plan']);
    const realmChange = replace.changes.find((change: any) => change.address === 'service_realm.ops');
    expect(realmChange).toMatchObject({ action: 'replace', forced_by: ['name'] });
    expect((await provision(['plan'])).stdout).toContain('# forces replacement');
    // the role's description names the realm's id: unknown until the new realm exists
    expect(replace.changes.find((change: any) => change.address === 'service_role.reader')).toMatchObject({
      action: 'update',
      attributes: [{ name: 'description', after: '(known after apply)' }],
    });
    await ok(['apply']);
    const state = stateOf();
    expect(state.resources['service_realm.ops'].id).not.toBe(oldRealm);
    expect(await get(`/roles/${state.resources['service_role.reader'].id}`)).toMatchObject({
      description: `reads the graph of realm ${state.resources['service_realm.ops'].id}`,
    });
    expect((await server.request('GET', `/realms/${oldRealm}`, { token: owner.token })).status).toBe(404);
    expect(await get(`/memory/${state.resources['service_memory.runbook'].id}`)).toMatchObject({ realm: 'platform' });
    expect((await ok(['plan'])).summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
  }, 120_000);

  it('shows drift made outside the engine and puts it back; re-creates what was deleted outside', async () => {
    const state = stateOf();
    await server.request('PATCH', `/realms/${state.resources['service_realm.ops'].id}`, { token: owner.token, body: { display_name: 'Renamed by hand' } });
    await server.request('DELETE', `/agents/${state.resources['service_agent.helper'].id}`, { token: owner.token });
    const text = await provision(['plan']);
    expect(text.stdout).toContain('Changed outside this configuration since the last apply:');
    expect(text.stdout).toContain('service_realm.ops: display_name "Ops team" -> "Renamed by hand"');
    expect(text.stdout).toContain('service_agent.helper: deleted');
    const plan = await ok(['plan']);
    expect(actions(plan)).toMatchObject({ 'service_realm.ops': 'update', 'service_agent.helper': 'create' });
    await ok(['apply']);
    expect((await ok(['plan'])).summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
  }, 120_000);
});

describe('import, failures, lock and destroy', () => {
  it('imports an existing object; a plan then shows only how it differs', async () => {
    const made = await server.request('POST', '/roles', {
      token: owner.token,
      body: { name: 'auditor', description: 'made by hand', permissions: ['audit:read'] },
    });
    write(
      config(
        'platform',
        'Ops team',
        `resource "service_role" "auditor" {\n  name        = "auditor"\n  description = "reads the audit log"\n  permissions = ["audit:read"]\n}\n`,
      ),
    );
    const imported = await ok(['import', 'service_role.auditor', made.body.id as string]);
    expect(imported).toEqual({ address: 'service_role.auditor', id: made.body.id });
    const plan = await ok(['plan']);
    const change = plan.changes.find((item: any) => item.address === 'service_role.auditor');
    expect(change).toMatchObject({ action: 'update', attributes: [{ name: 'description', before: 'made by hand', after: 'reads the audit log' }] });
    await ok(['apply']);
    const again = await provision(['import', 'service_role.auditor', made.body.id as string]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already in the state');
  }, 120_000);

  it('stops at the first failure and keeps the state true to what was done', async () => {
    write(
      config(
        'platform',
        'Ops team',
        `resource "service_realm" "extra" {\n  name = "extra"\n}\nresource "service_agent" "broken" {\n  agent_type = "no-such-type"\n  name       = "broken"\n  depends_on = [service_realm.extra]\n}\nresource "service_memory" "after" {\n  content    = "never made"\n  depends_on = [service_agent.broken]\n}\n`,
      ),
    );
    const failed = await provision(['apply']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('apply stopped at service_agent.broken (create)');
    const state = stateOf();
    expect(state.resources['service_realm.extra']).toBeDefined();
    expect(state.resources['service_agent.broken']).toBeUndefined();
    expect(state.resources['service_memory.after']).toBeUndefined();
    expect(await get(`/realms/${state.resources['service_realm.extra'].id}`)).toMatchObject({ name: 'extra' });
  }, 120_000);

  it('refuses a second apply while the state is locked by a live process', async () => {
    writeFileSync(`${statePath()}.lock`, JSON.stringify({ pid: process.pid, created_at: new Date().toISOString() }));
    try {
      const locked = await provision(['apply']);
      expect(locked.code).not.toBe(0);
      expect(locked.stderr).toContain('is locked by process');
    } finally {
      rmSync(`${statePath()}.lock`);
    }
  }, 60_000);

  it('refuses configuration errors before calling the server', async () => {
    const cases: [string, string][] = [
      ['resource "service_realm" "x" {\n  name = "x"\n  colour = "#fff"\n}\n', 'has no attribute "colour"'],
      ['resource "service_realm" "x" {\n  display_name = "x"\n}\n', 'the attribute "name" is required'],
      ['resource "service_realm" "x" {\n  name = "x"\n  id = "y"\n}\n', '"id" is computed'],
      ['resource "service_realm" "x" {\n  name = upper("x")\n}\n', 'unsupported expression'],
      [
        'resource "service_realm" "x" {\n  name = service_realm.y.name\n}\nresource "service_realm" "y" {\n  name = service_realm.x.name\n}\n',
        'dependency cycle',
      ],
      ['resource "service_widget" "x" {\n  name = "x"\n}\n', 'unknown resource kind service_widget'],
      ['resource "service_role" "x" {\n  name = "x"\n  permissions = "graph:read"\n}\n', 'permissions must be a list of strings'],
      ['output "x" {\n  value = service_realm.nope.id\n}\n', 'output "x": service_realm.nope.id is not declared'],
    ];
    const other = mkdtempSync(join(tmpdir(), 'provision-bad-'));
    try {
      for (const [text, message] of cases) {
        writeFileSync(join(other, 'main.tf'), text);
        const result = await runCli(['provision', 'plan', '--dir', other], { env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token } });
        expect(result.code, text).toBe(2);
        expect(result.stderr, text).toContain(message);
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 120_000);

  it('destroys everything it manages; settings stay as they are', async () => {
    const state = stateOf();
    const destroyed = await ok(['destroy']);
    expect(destroyed.resources).toBe(0);
    expect(Object.keys(stateOf().resources)).toEqual([]);
    for (const [address, path] of [
      ['service_realm.ops', '/realms'],
      ['service_memory.runbook', '/memory'],
      ['service_role.reader', '/roles'],
      ['service_agent.helper', '/agents'],
    ] as const) {
      expect((await server.request('GET', `${path}/${state.resources[address].id}`, { token: owner.token })).status, address).toBe(404);
    }
    expect(await get('/settings')).toMatchObject({ approval_timeout_secs: 600 });
  }, 120_000);
});

describe('the five kinds each round-trip (issue 23 audit)', () => {
  it('agent: update in place and replacement by agent_type; settings: update; realm, agent, memory, settings: import', async () => {
    const other = mkdtempSync(join(tmpdir(), 'provision-five-'));
    const run = async (args: readonly string[]): Promise<any> => {
      const result = await runCli(['provision', ...args, '--dir', other, '--json'], { env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token } });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    const made = async (path: string, body: Record<string, unknown>): Promise<string> => {
      const response = await server.request('POST', path, { token: owner.token, body });
      expect(response.status, `${path}: ${response.text}`).toBe(201);
      return response.body.id as string;
    };
    const agent = (type: string, name: string, enabled: boolean): string =>
      `resource "service_agent" "a" {\n  agent_type = "${type}"\n  name       = "${name}"\n  enabled    = ${enabled}\n}\n`;
    const settings = (timeout: number): string =>
      `resource "service_settings" "org" {\n  approval_timeout_secs = ${timeout}\n  llm_api_key           = "sk-five-secret"\n  llm_base_url          = "https://llm.example.test/v1"\n}\n`;
    try {
      // agent and settings made by the engine
      writeFileSync(join(other, 'main.tf'), agent('assistant', 'five', true) + settings(700));
      await run(['apply']);
      const state = (): any => JSON.parse(readFileSync(join(other, 'service.tfstate.json'), 'utf8'));
      const first = state().resources['service_agent.a'].id;
      expect(await get('/settings')).toMatchObject({ approval_timeout_secs: 700 });
      writeFileSync(join(other, 'main.tf'), agent('assistant', 'five renamed', false) + settings(800));
      expect(actions(await run(['plan']))).toEqual({ 'service_agent.a': 'update', 'service_settings.org': 'update' });
      await run(['apply']);
      expect(state().resources['service_agent.a'].id).toBe(first);
      expect(await get(`/agents/${first}`)).toMatchObject({ name: 'five renamed', enabled: false });
      expect(await get('/settings')).toMatchObject({ approval_timeout_secs: 800 });
      writeFileSync(join(other, 'main.tf'), agent('summarizer', 'five renamed', false) + settings(800));
      const replace = await run(['plan']);
      expect(replace.changes.find((change: any) => change.address === 'service_agent.a')).toMatchObject({ action: 'replace', forced_by: ['agent_type'] });
      await run(['apply']);
      const second = state().resources['service_agent.a'].id;
      expect(second).not.toBe(first);
      expect((await server.request('GET', `/agents/${first}`, { token: owner.token })).status).toBe(404);
      expect(await get(`/agents/${second}`)).toMatchObject({ agent_type: 'summarizer', name: 'five renamed' });
      expect((await run(['plan'])).summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
      await run(['destroy']);
      expect((await server.request('GET', `/agents/${second}`, { token: owner.token })).status).toBe(404);

      // realm, agent, memory and settings made through the API, then imported
      const ids: Record<string, string> = {
        'service_realm.r': await made('/realms', { name: 'imported-five', display_name: 'Imported' }),
        'service_agent.a': await made('/agents', { agent_type: 'sre', name: 'imported agent' }),
        'service_memory.m': await made('/memory', { text: 'Imported memory', title: 'Imported', kind: 'fact', tags: ['x'] }),
        'service_settings.org': 'org-settings',
      };
      writeFileSync(
        join(other, 'main.tf'),
        `resource "service_realm" "r" {\n  name         = "imported-five"\n  display_name = "Imported"\n}\n` +
          agent('sre', 'imported agent', true) +
          `resource "service_memory" "m" {\n  content     = "Imported memory"\n  title       = "Imported"\n  memory_type = "fact"\n  tags        = ["x"]\n}\n` +
          settings(800),
      );
      for (const [address, id] of Object.entries(ids)) expect(await run(['import', address, id])).toEqual({ address, id });
      // the settings' llm_api_key is write-only on the API: only it differs
      const plan = await run(['plan']);
      expect(actions(plan)).toEqual({ 'service_realm.r': 'noop', 'service_agent.a': 'noop', 'service_memory.m': 'noop', 'service_settings.org': 'update' });
      expect(plan.changes.find((change: any) => change.address === 'service_settings.org').attributes.map((item: any) => item.name)).toEqual(['llm_api_key']);
      await run(['apply']);
      expect((await run(['plan'])).summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0 });
      await run(['destroy']);
      for (const [address, path] of [
        ['service_realm.r', '/realms'],
        ['service_agent.a', '/agents'],
        ['service_memory.m', '/memory'],
      ] as const) {
        expect((await server.request('GET', `${path}/${ids[address] as string}`, { token: owner.token })).status, address).toBe(404);
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 300_000);
});
