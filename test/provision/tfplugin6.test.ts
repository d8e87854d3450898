/**
 * `service-proxy-cli terraform-provider` driven the way Terraform drives it
 * (terraform-host.ts plays Terraform's side of go-plugin and tfplugin6)
 * against the real server: for every resource kind the registry holds, the
 * cycle plan/apply create, refresh, a plan with no changes, update in place,
 * replacement on an immutable change (or, where the server has one valid
 * value of it, `-replace`; the table says which kinds have no immutable
 * attribute), import, destroy; the data catalogs; the
 * handshake, mutual TLS and go-plugin's services; state upgrades, unknown
 * values and diagnostics.
 */
import { spawn } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { encode, ExtData } from '@msgpack/msgpack';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_SOURCES, RESOURCE_KINDS } from '../../cli/provision/kinds/index.js';
import { signHmac } from '../../runtime/crypto.js';
import type { Attribute, ResourceKind } from '../../cli/provision/schema.js';
import { selfSignedCertificate } from '../../cli/terraform/plugin.js';
import { CLI_ENTRY, PROJECT_ROOT, TSX_LOADER } from '../cli/run-cli.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { decodeValue, encodeValue, TerraformHost, UNKNOWN, type Obj } from './terraform-host.js';

let server: TestServer;
let owner: Session;
let host: TerraformHost;
beforeAll(async () => {
  ({ server, owner } = await oneOrg({ SERVICE_FEATURES_POLICIES: 'true' }, { name: 'Terraformed Org' }));
  host = await TerraformHost.start();
  await host.loadSchema();
  await host.configure(server.url, owner.token);
}, 120_000);
afterAll(async () => {
  host?.kill();
  await server?.stop();
});

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${(counter += 1)}`;

interface Fixture {
  /** the attributes of the first apply */
  create(): Obj | Promise<Obj>;
  /** attributes changed in place (no immutable one) */
  update(): Obj | Promise<Obj>;
  /**
   * how the replacement is exercised: an immutable attribute's new value; `NO_IMMUTABLE` for a kind
   * without immutable attributes (nothing forces a replacement); `FORCED` where the server has no second
   * valid value of its immutable attribute: replaced as `terraform apply -replace=ADDRESS` does
   */
  replace(): Replacement | Promise<Replacement>;
  /** mutable attributes that must change with the replacement (a config of the new source type, no cron on a webhook task) */
  alongside?(): Obj;
  /** false: deleting leaves the object (service_settings) */
  readonly deletes?: false;
}

const NO_IMMUTABLE = 'no immutable attribute';
const FORCED = 'forced (-replace)';
type Replacement = Obj | typeof NO_IMMUTABLE | typeof FORCED;

/** a Rego identifier (policy names: lowercase a-z, 0-9, `_`) */
const identifier = (prefix: string): string => `${prefix}_${Date.now().toString(36)}_${(counter += 1)}`;
const readOnly = (name: string, message: string): string =>
  `package service.${name}\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "${message}"\n}\n`;
let policyName = '';
let replacedPolicyName = '';

/** kinds whose values have rules the schema does not tell (names from the catalogs, permission names) */
const FIXTURES: Record<string, Fixture> = {
  service_realm: {
    create: () => ({ name: unique('tf-realm'), display_name: 'Terraform realm' }),
    update: () => ({ display_name: 'Renamed by Terraform', description: 'made by the provider test' }),
    replace: () => ({ name: unique('tf-realm') }),
  },
  service_agent: {
    create: () => ({ agent_type: 'assistant', name: unique('tf-agent') }),
    update: () => ({ name: unique('tf-agent-renamed'), enabled: false }),
    replace: async () => {
      const catalog = await host.readData('service_agent_types');
      const other = (catalog['types'] as { agent_type: string }[]).find((type) => type.agent_type !== 'assistant');
      return other ? { agent_type: other.agent_type } : FORCED;
    },
  },
  service_memory: {
    create: () => ({ content: 'Restart the ingest worker with systemctl restart ingest', tags: ['runbook'] }),
    update: () => ({ title: 'Ingest restarts', memory_type: 'fact' }),
    replace: () => NO_IMMUTABLE,
  },
  service_settings: {
    create: () => ({ approval_timeout_secs: 600, llm_api_key: 'sk-terraform-secret', llm_base_url: 'https://llm.example.test/v1' }),
    update: () => ({ approval_timeout_secs: 900 }),
    replace: () => NO_IMMUTABLE,
    deletes: false,
  },
  service_role: {
    create: () => ({ name: unique('tf-role'), permissions: ['graph:read'] }),
    update: () => ({ description: 'reads the graph and the audit log', permissions: ['graph:read', 'audit:read'] }),
    replace: () => NO_IMMUTABLE,
  },
  service_source: {
    create: () => ({ name: unique('tf-source'), source_type: 'github', config: { auth: { kind: 'pat', token: 'ghp_terraform_secret' }, orgs: ['acme'] } }),
    update: () => ({ name: unique('tf-source-renamed') }),
    replace: () => ({ source_type: 'vercel' }),
    alongside: () => ({ config: { token: 'vercel_terraform_secret', team_id: 'team_acme' } }),
  },
  service_task: {
    create: () => ({ name: unique('tf-task'), cron_expression: '0 * * * *', message_template: 'Summarize the stale pull requests' }),
    update: () => ({ cron_expression: '30 * * * *', is_active: false, response_channel: '#ops' }),
    replace: () => ({ trigger_type: 'webhook' }),
    alongside: () => ({ cron_expression: null }),
  },
  service_policy: {
    create: () => {
      policyName = identifier('tf_policy');
      return { name: policyName, rego_code: readOnly(policyName, 'read-only') };
    },
    update: () => ({ rego_code: readOnly(policyName, 'read-only: ask a human') }),
    replace: () => {
      replacedPolicyName = identifier('tf_policy');
      return { name: replacedPolicyName };
    },
    alongside: () => ({ rego_code: readOnly(replacedPolicyName, 'read-only: ask a human') }),
  },
  service_policy_source: {
    create: () => ({ name: unique('tf-policies'), source_type: 'inline', modules: { 'lib/tools.rego': 'package lib.tools\n\nwrites := {"memory.store"}\n' } }),
    update: () => ({ modules: { 'lib/tools.rego': 'package lib.tools\n\nwrites := {"memory.store", "files.write"}\n' }, enabled: false }),
    replace: () => ({ name: unique('tf-policies') }),
  },
  service_channel: {
    create: () => ({ channel_type: 'slack', display_name: 'Ops' }),
    update: () => ({ display_name: 'Ops room', response_mode: 'enabled' }),
    // a second channel type of the catalog when there is one; today slack is the only one
    replace: async () => {
      const catalog = await server.request('GET', '/channels/catalog', { token: owner.token });
      const other = (catalog.body.items as { channel_type: string }[]).find((item) => item.channel_type !== 'slack');
      return other ? { channel_type: other.channel_type } : FORCED;
    },
  },
  service_api_key: {
    create: () => ({ name: unique('tf-key'), permissions: ['graph:read'], expires_in_days: 30 }),
    update: () => ({ name: unique('tf-key-renamed'), permissions: ['graph:read', 'audit:read'] }),
    replace: () => ({ expires_in_days: 60 }),
  },
  service_gateway: {
    create: () => ({ name: unique('tf-gateway'), engine_type: 'webhook', base_url: 'https://orchestrator.example.test', api_key: 'gw-first-key-0123456789' }),
    update: () => ({ base_url: 'https://orchestrator2.example.test', context: { team: 'ops' } }),
    replace: () => ({ engine_type: 'temporal' }),
    alongside: () => ({ context: { task_queue: 'agents', workflow_type: 'RunAgent' } }),
  },
};

/** values by attribute name for kinds without a fixture */
const HINTS: Record<string, () => unknown> = {
  cron_expression: () => '0 3 * * *',
  timezone: () => 'UTC',
  url: () => 'https://example.test/hook',
  realm: () => 'default',
};
const generated = (name: string, attribute: Attribute): unknown => {
  const hint = HINTS[name] ?? Object.entries(HINTS).find(([key]) => name.endsWith(`_${key}`))?.[1];
  if (hint) return hint();
  switch (attribute.type) {
    case 'string':
      return unique(`tf-${name.replace(/_/g, '-')}`);
    case 'number':
      return 60;
    case 'bool':
      return true;
    case 'list_string':
      return [];
    case 'map_string':
      return {};
    case 'json':
      return {};
  }
};
/** a fixture from the schema alone: required attributes generated, the first free-text or bool attribute changed, the first immutable one replaced */
const generic = (kind: ResourceKind): Fixture => {
  const settable = Object.entries(kind.attributes).filter(([, attribute]) => attribute.required || attribute.optional);
  const mutable = settable.filter(([name, attribute]) => !attribute.immutable && !attribute.sensitive && !(name in HINTS));
  const text = mutable.find(([, attribute]) => attribute.type === 'string') ?? mutable.find(([, attribute]) => attribute.type === 'bool');
  const immutable = settable.find(
    ([name, attribute]) => attribute.immutable && attribute.type === 'string' && attribute.default === undefined && !(name in HINTS),
  );
  return {
    create: () => Object.fromEntries(settable.filter(([, attribute]) => attribute.required).map(([name, attribute]) => [name, generated(name, attribute)])),
    update: () => (text ? { [text[0]]: text[1].type === 'bool' ? false : unique('tf-changed') } : {}),
    replace: () => {
      if (immutable) return { [immutable[0]]: unique(`tf-${immutable[0].replace(/_/g, '-')}`) };
      return settable.some(([, attribute]) => attribute.immutable) ? FORCED : NO_IMMUTABLE;
    },
  };
};

describe('every resource kind of the registry round-trips through the protocol', () => {
  for (const kind of RESOURCE_KINDS.values()) {
    it(`${kind.name}: create, refresh, no-change plan, update in place, replace, import, destroy`, async () => {
      const fixture = FIXTURES[kind.name] ?? generic(kind);
      const given = await fixture.create();
      let config = host.configOf(kind.name, given);

      // create: the id and computed values are unknown in the plan
      const created = await host.plan(kind.name, null, config);
      expect(created.action).toBe('create');
      expect(created.planned?.['id']).toBe(UNKNOWN);
      let { state } = await host.converge(kind.name, null, config);
      expect(typeof state['id']).toBe('string');
      for (const [name, value] of Object.entries(given)) expect(state[name], name).toEqual(value);

      // refresh reads back what was applied; a plan then has nothing to do
      const refreshed = await host.read(kind.name, state);
      expect(refreshed).toEqual(state);
      expect((await host.plan(kind.name, state, config)).action).toBe('noop');

      // update in place
      const changes = await fixture.update();
      expect(Object.keys(changes).length, `${kind.name}: no attribute to update`).toBeGreaterThan(0);
      config = host.configOf(kind.name, { ...given, ...changes });
      const update = await host.plan(kind.name, state, config);
      expect(update.action).toBe('update');
      expect(update.replace).toEqual([]);
      const id = state['id'];
      ({ state } = await host.converge(kind.name, state, config));
      expect(state['id']).toBe(id);
      for (const [name, value] of Object.entries(changes)) expect(state[name], name).toEqual(value);
      expect(await host.read(kind.name, state)).toEqual(state);
      expect((await host.plan(kind.name, state, config)).action).toBe('noop');

      // replace when an immutable attribute changes
      const immutable = Object.entries(kind.attributes)
        .filter(([, attribute]) => attribute.immutable)
        .map(([name]) => name);
      const replacement = await fixture.replace();
      expect(replacement === NO_IMMUTABLE, `${kind.name}: immutable attributes ${immutable.join(', ')}`).toBe(immutable.length === 0);
      if (replacement !== NO_IMMUTABLE) {
        const forced = replacement === FORCED;
        if (!forced) config = host.configOf(kind.name, { ...given, ...changes, ...fixture.alongside?.(), ...replacement });
        const old = state;
        const replaced = await host.converge(kind.name, state, config, { forceReplace: forced });
        expect(replaced.action).toBe('replace');
        expect(replaced.replace).toEqual(forced ? [] : Object.keys(replacement));
        if (!forced) expect(Object.keys(replacement).every((name) => immutable.includes(name))).toBe(true);
        state = replaced.state;
        expect(state['id']).not.toBe(old['id']);
        expect(await host.read(kind.name, old)).toBeNull();
        expect((await host.plan(kind.name, state, config)).action).toBe('noop');
      }

      // import by id: the state read from the server; a plan then changes only what the server cannot tell (sensitive values)
      const imported = await host.import(kind.name, state['id'] as string);
      const sensitive = Object.entries(kind.attributes)
        .filter(([, attribute]) => attribute.sensitive)
        .map(([name]) => name);
      for (const name of Object.keys(state)) if (!sensitive.includes(name)) expect(imported[name], name).toEqual(state[name]);
      const afterImport = await host.plan(kind.name, await host.read(kind.name, imported), config);
      expect(afterImport.action).toBe(sensitive.some((name) => config[name] !== null) ? 'update' : 'noop');

      // destroy
      const destroy = await host.plan(kind.name, state, null);
      expect(destroy.action).toBe('delete');
      await host.apply(kind.name, state, null, null);
      if (fixture.deletes === false) expect(await host.read(kind.name, state)).not.toBeNull();
      else expect(await host.read(kind.name, state)).toBeNull();
    }, 120_000);
  }
});

describe('the schema, data sources and the protocol details', () => {
  it('declares every kind of the registry from the same schema', async () => {
    const metadata = await host.ok('GetMetadata');
    expect(metadata.resources.map((item: any) => item.type_name).sort()).toEqual([...RESOURCE_KINDS.keys()].sort());
    expect(metadata.data_sources.map((item: any) => item.type_name).sort()).toEqual([...DATA_SOURCES.keys()].sort());
    const schema = await host.loadSchema();
    expect(schema.provider.block.attributes.map((attribute: any) => [attribute.name, attribute.sensitive])).toEqual([
      ['endpoint', false],
      ['token', true],
      ['realm', false],
    ]);
    for (const kind of RESOURCE_KINDS.values()) {
      const attributes = Object.fromEntries(host.schema(kind.name).attributes.map((attribute) => [attribute.name, attribute]));
      expect(attributes['id']).toMatchObject({ type: 'string', computed: true, required: false, optional: false });
      for (const [name, attribute] of Object.entries(kind.attributes)) {
        expect(attributes[name], `${kind.name}.${name}`).toMatchObject({
          required: attribute.required === true,
          optional: attribute.required !== true && attribute.optional === true,
          computed: attribute.computed === true || attribute.default !== undefined,
          sensitive: attribute.sensitive === true,
        });
      }
    }
    expect(host.schema('service_settings').attributes.find((attribute) => attribute.name === 'llm_api_key')).toMatchObject({ sensitive: true });
    expect(host.schema('service_agent').attributes.find((attribute) => attribute.name === 'config')?.type).toBe('dynamic');
    expect(host.schema('service_memory').attributes.find((attribute) => attribute.name === 'tags')?.type).toEqual(['list', 'string']);
    expect((await host.ok('GetResourceIdentitySchemas')).identity_schemas).toEqual({});
  });

  it('reads the two catalogs as data sources', async () => {
    const types = await host.readData('service_agent_types');
    expect(types['id']).toBe('agent-types');
    expect((types['types'] as { agent_type: string }[]).map((type) => type.agent_type)).toContain('assistant');
    const permissions = await host.readData('service_permissions');
    expect(permissions['names']).toContain('graph:read');
  });

  it('plans unknown values (plain and refined) from configuration and takes JSON DynamicValues', async () => {
    const { type } = host.schema('service_memory');
    const config = host.configOf('service_memory', { content: 'x' });
    // title references something unknown: extension 0; realm a refined unknown: extension 12 with its refinements
    const raw = encode({
      ...Object.fromEntries(Object.keys(config).map((name) => [name, null])),
      content: 'x',
      title: new ExtData(0, new Uint8Array([0])),
      realm: new ExtData(12, encode({ 1: false })),
    });
    const response = await host.ok('PlanResourceChange', {
      type_name: 'service_memory',
      prior_state: encodeValue(null, type),
      proposed_new_state: { msgpack: Buffer.from(raw) },
      config: { msgpack: Buffer.from(raw) },
    });
    const planned = decodeValue(response.planned_state, type) as Obj;
    expect(planned).toMatchObject({ id: UNKNOWN, title: UNKNOWN, realm: UNKNOWN, content: 'x', memory_type: 'guideline', tags: [] });

    const agent = host.configOf('service_agent', {});
    const json = Buffer.from(
      JSON.stringify({ ...agent, agent_type: 'assistant', name: 'json-agent', config: { type: ['object', { a: 'string' }], value: { a: 'b' } } }),
    );
    const validated = await host.call('ValidateResourceConfig', { type_name: 'service_agent', config: { json } });
    expect(validated.diagnostics).toEqual([]);
    const plannedAgent = await host.ok('PlanResourceChange', {
      type_name: 'service_agent',
      prior_state: encodeValue(null, host.schema('service_agent').type),
      proposed_new_state: { json: Buffer.from(JSON.stringify({ ...agent, agent_type: 'assistant', name: 'json-agent' })) },
      config: { json: Buffer.from(JSON.stringify({ ...agent, agent_type: 'assistant', name: 'json-agent' })) },
    });
    expect(decodeValue(plannedAgent.planned_state, host.schema('service_agent').type)).toMatchObject({ name: 'json-agent', enabled: true, config: {} });
  });

  it('upgrades a JSON state to the current schema (unknown attributes dropped, missing ones null)', async () => {
    const raw = { id: 'r1', name: 'ops', display_name: 'Ops', retired_attribute: 'x' };
    const response = await host.ok('UpgradeResourceState', { type_name: 'service_realm', version: 0, raw_state: { json: Buffer.from(JSON.stringify(raw)) } });
    expect(decodeValue(response.upgraded_state, host.schema('service_realm').type)).toEqual({
      id: 'r1',
      name: 'ops',
      display_name: 'Ops',
      description: null,
      color: null,
    });
  });

  it('answers failures as diagnostics and keeps serving', async () => {
    const { type } = host.schema('service_agent');
    const config = host.configOf('service_agent', { agent_type: 'no-such-type', name: unique('broken') });
    const plan = await host.plan('service_agent', null, config);
    const applied = await host.call('ApplyResourceChange', {
      type_name: 'service_agent',
      prior_state: encodeValue(null, type),
      planned_state: encodeValue(plan.planned, type),
      config: encodeValue(config, type),
    });
    expect(applied.diagnostics).toHaveLength(1);
    expect(applied.diagnostics[0]).toMatchObject({ severity: 'ERROR', summary: 'Cannot apply the change' });

    const wrongType = await host.call('ValidateResourceConfig', {
      type_name: 'service_agent',
      config: { json: Buffer.from(JSON.stringify({ ...config, agent_type: 'assistant', config: { type: 'string', value: 'not an object' } })) },
    });
    expect(wrongType.diagnostics[0]).toMatchObject({ severity: 'ERROR', attribute: { steps: [{ attribute_name: 'config' }] } });
    const unknownType = await host.call('ReadResource', { type_name: 'service_nothing', current_state: { json: Buffer.from('{}') } });
    expect(unknownType.diagnostics[0].detail).toContain('unknown resource type service_nothing');
    const badMsgpack = await host.call('PlanResourceChange', { type_name: 'service_realm', config: { msgpack: Buffer.from([0xc1]) } });
    expect(badMsgpack.diagnostics[0].severity).toBe('ERROR');
    const missing = await host.call('ImportResourceState', { type_name: 'service_role', id: 'no-such-role' });
    expect(missing.diagnostics[0].detail).toContain('no service_role with id "no-such-role"');
    // still serving
    expect((await host.ok('GetMetadata')).resources.length).toBe(RESOURCE_KINDS.size);
  });

  it('refreshes a computed attribute the server changed (a health probe) into state without planning a change', async () => {
    const config = host.configOf('service_gateway', {
      name: unique('tf-probed'),
      engine_type: 'webhook',
      base_url: 'https://orchestrator.example.test',
      api_key: 'gw-probed-key-0123456789',
    });
    const { state } = await host.converge('service_gateway', null, config);
    expect(state['last_health_status']).toBe('unknown');
    const probed = await server.request('POST', `/gateways/${state['id'] as string}/test`, { token: owner.token });
    expect(probed.body.last_health_status).toBe('down');
    const refreshed = (await host.read('service_gateway', state)) as Obj;
    expect(refreshed['last_health_status']).toBe('down');
    const plan = await host.plan('service_gateway', refreshed, config);
    expect(plan.action).toBe('noop');
    await host.apply('service_gateway', refreshed, null, null);
  });

  it("keeps a webhook task's signing secret: answered at create, sensitive, kept across refreshes and updates; null after import", async () => {
    expect(host.schema('service_task').attributes.find((attribute) => attribute.name === 'webhook_secret')).toMatchObject({
      computed: true,
      optional: false,
      sensitive: true,
    });
    let config = host.configOf('service_task', { name: unique('tf-hook-task'), trigger_type: 'webhook', message_template: 'Look at {{trigger.body.type}}' });
    const created = await host.plan('service_task', null, config);
    expect(created.planned?.['webhook_secret']).toBe(UNKNOWN);
    let { state } = await host.converge('service_task', null, config);
    const secret = state['webhook_secret'] as string;
    expect(secret).toMatch(/^whsec_[^*]+$/);
    const live = await server.request('GET', `/tasks/${state['id'] as string}`, { token: owner.token });
    expect(live.body.trigger.secret).toBe('whsec_********');
    expect(await host.read('service_task', state)).toEqual(state);
    config = { ...config, system_prompt: 'You look at deployments.' };
    ({ state } = await host.converge('service_task', state, config));
    expect(state['webhook_secret']).toBe(secret);
    const body = '{"type":"deployment.failed"}';
    const url = state['webhook_url'] as string;
    const delivery = await server.request('POST', url.slice(url.indexOf('/api/v1') + '/api/v1'.length), {
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signHmac(secret, Buffer.from(body)) },
    });
    expect(delivery.status).toBe(202);
    expect((await host.import('service_task', state['id'] as string))['webhook_secret']).toBeNull();
    await host.apply('service_task', state, null, null);
  });

  it('refuses at plan time a channel_type the channel catalog does not hold', async () => {
    const { type } = host.schema('service_channel');
    const config = host.configOf('service_channel', { channel_type: 'teams', display_name: 'Teams room' });
    const response = await host.call('PlanResourceChange', {
      type_name: 'service_channel',
      prior_state: encodeValue(null, type),
      proposed_new_state: encodeValue({ ...config, id: UNKNOWN }, type),
      config: encodeValue(config, type),
    });
    expect(response.diagnostics).toHaveLength(1);
    expect(response.diagnostics[0]).toMatchObject({ severity: 'ERROR', summary: 'Cannot plan the change' });
    expect(response.diagnostics[0].detail).toContain('channel_type "teams" is not in the channel catalog (known: slack)');
  });

  it('reads an object deleted outside Terraform as gone', async () => {
    const config = host.configOf('service_role', { name: unique('tf-gone'), permissions: ['graph:read'] });
    const { state } = await host.converge('service_role', null, config);
    await server.request('DELETE', `/roles/${state['id'] as string}`, { token: owner.token });
    expect(await host.read('service_role', state)).toBeNull();
  });
});

describe('go-plugin: handshake, mutual TLS, health, shutdown', () => {
  it('prints the handshake line: core protocol 1, tfplugin 6, tcp on 127.0.0.1, grpc, its certificate', () => {
    expect(host.handshake).toMatchObject({ core: '1', protocol: '6', network: 'tcp', kind: 'grpc' });
    expect(host.handshake.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(host.handshake.certDer.length).toBeGreaterThan(300);
  });

  it('answers the health check for "plugin" and keeps the stdio stream open', async () => {
    const health = host.client(host.packages.grpc.health.v1.Health);
    expect(await host.call('Check', { service: 'plugin' }, health)).toEqual({ status: 'SERVING' });
    const stdio = host.client(host.packages.plugin.GRPCStdio) as any;
    const stream = stdio.StreamStdio({});
    const status = new Promise((resolve) => stream.on('status', resolve));
    stream.on('error', () => undefined);
    stream.cancel();
    expect(await status).toMatchObject({ code: grpc.status.CANCELLED });
  });

  it('refuses a client whose certificate is not the one Terraform gave', async () => {
    const stranger = selfSignedCertificate('stranger');
    const serverPem = forge.pki.certificateToPem(forge.pki.certificateFromAsn1(forge.asn1.fromDer(host.handshake.certDer.toString('binary'))));
    const credentials = grpc.credentials.createSsl(Buffer.from(serverPem), Buffer.from(stranger.keyPem), Buffer.from(stranger.certPem));
    const client = host.client(host.packages.tfplugin6.Provider, credentials);
    await expect(
      new Promise((resolve, reject) =>
        (client as any).GetMetadata({}, { deadline: Date.now() + 10_000 }, (error: Error | null, value: unknown) => (error ? reject(error) : resolve(value))),
      ),
    ).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    client.close();
  });

  it('exits 1 with a human message when not started by Terraform', async () => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'terraform-provider'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('started by Terraform or OpenTofu');
  });

  it('shuts down when go-plugin asks (GRPCController.Shutdown)', async () => {
    const second = await TerraformHost.start();
    try {
      expect(await second.call('StopProvider')).toEqual({ Error: '' });
      expect(await second.shutdown()).toBe(0);
    } finally {
      second.kill();
    }
  });
});
