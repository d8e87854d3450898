/**
 * Source configs are checked against the connector's declared config schema
 * before any use, and every failure is typed: a wrong-typed value of any
 * config field of any connector in the catalog answers 400 `validation_error`
 * naming the field (create and update), never a 500 and never the text of a
 * JavaScript exception. /test and sync of a connector that trips over an
 * answer of an unexpected shape fail typed, without that text either.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { ApiResponse, Session, TestServer } from '../helpers/server.js';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** nothing listens there: no test call leaves the machine */
const NOWHERE = 'http://127.0.0.1:1';

/** A valid config per connector kind; a kind the catalog lists without an entry here fails the sweep. */
const VALID: Record<string, Record<string, unknown>> = {
  slack: { bot_token: 'xoxb-1', base_url: `${NOWHERE}/api/` },
  github: { auth: { kind: 'pat', token: 'ghp_1' }, base_url: NOWHERE },
  jenkins: { url: `${NOWHERE}/`, username: 'ci', api_token: 't' },
  vercel: { token: 't', base_url: NOWHERE },
  kubernetes: {
    auth: {
      kind: 'kubeconfig',
      kubeconfig: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'k', cluster: { server: NOWHERE, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
      }),
    },
    base_url: NOWHERE,
  },
  grafana: { base_url: NOWHERE, api_token: 'glsa_1' },
  runway: { api_key: 'key', base_url: NOWHERE },
  mcp: { transport: 'http', url: `${NOWHERE}/mcp` },
  postgres: { host: '127.0.0.1', port: 1, user: 'reader', password: 'pw', tls: 'disable' },
  mysql: { url: 'mysql://reader:pw@127.0.0.1:1/orders?ssl-mode=DISABLED' },
  aws: { regions: ['us-east-1'], access_key_id: 'AKIAEXAMPLEEXAMPLE', secret_access_key: 'secret', endpoint: NOWHERE },
  notes_template: { base_url: NOWHERE, token: 't', workspace: 'w' },
  careless: { upstream_answer: '[]' },
};

/** leak markers: the text of a JavaScript exception */
const LEAKS = ['is not a function', 'Cannot read properties', 'is not iterable', 'undefined (reading', 'TypeError'];

const CANDIDATES: readonly unknown[] = ['x', 42, 4.5, true, null, { nested: { garbage: [1, { deeper: null }] } }, [7, { a: [null] }]];

type Schema = { type?: string | string[]; enum?: unknown[]; const?: unknown; properties?: Record<string, Schema>; items?: Schema };

const typeOf = (value: unknown): string[] => {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return [typeof value];
};

/** the candidates a field's schema refuses by type or enum (arrays and objects of garbage included) */
function wrongValuesFor(schema: Schema): unknown[] {
  if (schema.type !== undefined) {
    const allowed = Array.isArray(schema.type) ? schema.type : [schema.type];
    const wrong = CANDIDATES.filter((value) => !typeOf(value).some((type) => allowed.includes(type)));
    // the right container holding garbage
    if (allowed.includes('array') && schema.items?.type !== undefined) wrong.push([{ garbage: true }, null]);
    if (allowed.includes('object') && schema.properties === undefined) wrong.push({ key: { nested: [1] } });
    return wrong;
  }
  if (schema.enum !== undefined) return CANDIDATES.filter((value) => !schema.enum!.includes(value));
  return [];
}

/** every field path of a config schema, nested objects included (`auth.kind`) */
function fieldsOf(schema: Schema, prefix = ''): { path: string; schema: Schema }[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => [
    { path: `${prefix}${name}`, schema: field },
    ...(field.properties ? fieldsOf(field, `${prefix}${name}.`) : []),
  ]);
}

function withValue(config: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(config);
  const keys = path.split('.');
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
    target = target[key] as Record<string, unknown>;
  }
  target[keys.at(-1)!] = value;
  return copy;
}

function expectTypedRefusal(response: ApiResponse, field: string, label: string): void {
  expect(response.status, `${label}: ${response.text}`).toBe(400);
  expect(response.body.error.code, label).toBe('validation_error');
  const paths = (response.body.error.details.issues as { path: string }[]).map((issue) => issue.path);
  const wanted = `config.${field}`;
  expect(
    paths.some((path) => path === wanted || path.startsWith(`${wanted}.`)),
    `${label}: ${paths.join(', ')}`,
  ).toBe(true);
  for (const leak of LEAKS) expect(response.text, label).not.toContain(leak);
}

let server: TestServer;
let owner: Session;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'careless-plugins-'));
  const pluginsFile = join(dir, 'plugins.json');
  writeFileSync(pluginsFile, JSON.stringify({ plugins: [here('../fixtures/connectors/careless-plugin.ts'), here('../../connectors/template/index.ts')] }));
  ({ server, owner } = await oneOrg({ PLUGINS_FILE: pluginsFile }, { name: 'Config Sweep' }));
});
afterAll(async () => {
  await server?.stop();
});

const createSource = (name: string, connector: string, config: unknown) =>
  server.request('POST', '/sources', { token: owner.token, body: { name, connector, config } });

describe('config schemas, swept over the catalog', () => {
  let catalog: { kind: string; config_schema: Schema }[];
  beforeAll(async () => {
    const answer = await server.request('GET', '/sources/catalog', { token: owner.token });
    catalog = answer.body.items;
  });

  it('every kind in the catalog has a valid config here, and it is accepted', async () => {
    expect(catalog.map((item) => item.kind).sort()).toEqual(Object.keys(VALID).sort());
    for (const { kind } of catalog) {
      const made = await createSource(`valid ${kind}`, kind, VALID[kind]);
      expect(made.status, `${kind}: ${made.text}`).toBe(201);
    }
  });

  it('create: each wrong-typed value of each field of each connector is a 400 naming the field', async () => {
    let checked = 0;
    for (const { kind, config_schema: schema } of catalog) {
      for (const field of fieldsOf(schema)) {
        for (const value of wrongValuesFor(field.schema)) {
          const label = `${kind} ${field.path}=${JSON.stringify(value)}`;
          expectTypedRefusal(await createSource(`bad ${kind} ${checked}`, kind, withValue(VALID[kind]!, field.path, value)), field.path, label);
          checked += 1;
        }
      }
      // the config itself of the wrong shape
      for (const value of ['x', 42, null, [1, 2]]) {
        const response = await createSource(`bad ${kind} whole`, kind, value);
        expect(response.status, `${kind} config=${JSON.stringify(value)}`).toBe(400);
        expect(response.body.error.code).toBe('validation_error');
      }
    }
    // every connector has several fields, each with several wrong values
    expect(checked).toBeGreaterThan(catalog.length * 8);
  });

  it('update: the same refusals on PATCH, and the stored config stays as it was', async () => {
    for (const { kind, config_schema: schema } of catalog) {
      const source = (await createSource(`patched ${kind}`, kind, VALID[kind])).body;
      for (const field of fieldsOf(schema)) {
        for (const value of wrongValuesFor(field.schema)) {
          const label = `PATCH ${kind} ${field.path}=${JSON.stringify(value)}`;
          const response = await server.request('PATCH', `/sources/${source.id}`, {
            token: owner.token,
            body: { config: withValue(VALID[kind]!, field.path, value) },
          });
          expectTypedRefusal(response, field.path, label);
        }
      }
      const after = await server.request('GET', `/sources/${source.id}`, { token: owner.token });
      expect(after.body.config, kind).toEqual(source.config);
    }
  });

  it("/test of every kind against a system that is not there fails typed (422), never with an exception's text", async () => {
    for (const { kind } of catalog) {
      if (kind === 'careless') continue;
      const source = (await createSource(`tested ${kind}`, kind, VALID[kind])).body;
      const response = await server.request('GET', `/sources/${source.id}/test`, { token: owner.token });
      expect(response.status, `${kind}: ${response.text}`).toBe(422);
      expect(response.body.error.code).toBe('source_validation_failed');
      for (const leak of LEAKS) expect(response.text, kind).not.toContain(leak);
    }
  });
});

describe('connectors that trip over an answer of an unexpected shape', () => {
  it('/test answers 422 with a typed, generic reason instead of the TypeError text', async () => {
    for (const answer of ['"x"', '{"orgs":[]}', '42', 'null']) {
      const source = (await createSource(`careless ${answer}`, 'careless', { upstream_answer: answer })).body;
      const response = await server.request('GET', `/sources/${source.id}/test`, { token: owner.token });
      expect(response.status, response.text).toBe(422);
      expect(response.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'sync_failed', cause: 'connector_error' } });
      for (const leak of LEAKS) expect(response.text).not.toContain(leak);
      const stored = await server.request('GET', `/sources/${source.id}`, { token: owner.token });
      expect(stored.body.status).toBe('failed');
      for (const leak of LEAKS) expect(JSON.stringify(stored.body.last_error)).not.toContain(leak);
    }
  });

  it('a sync that throws a TypeError fails its job typed, without the text', async () => {
    const source = (await createSource('careless sync', 'careless', VALID['careless'])).body;
    const started = await server.request('POST', `/sources/${source.id}/sync`, { token: owner.token });
    expect(started.status, started.text).toBe(202);
    await server.service.services.sourceService.settled(source.id);
    const job = await server.request('GET', `/sources/${source.id}/jobs/${started.body.id}`, { token: owner.token });
    expect(job.body).toMatchObject({ status: 'failed', error: { code: 'sync_failed', details: { cause: 'connector_error' } } });
    for (const leak of LEAKS) expect(job.text).not.toContain(leak);
  });

  describe('grafana whose /api/user/orgs is not a list', () => {
    let grafana: Server;
    let url: string;
    let orgsAnswer: unknown;
    beforeAll(async () => {
      grafana = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url === '/api/user') res.end(JSON.stringify({ login: 'sa', orgId: 1 }));
        else if (req.url === '/api/user/orgs') res.end(JSON.stringify(orgsAnswer));
        else res.end('[]');
      });
      await new Promise<void>((resolve) => grafana.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(grafana.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => grafana.close(resolve));
    });

    it('answers 422 upstream_error naming the shape problem, for objects, strings and null', async () => {
      for (const answer of [{ orgs: 'x' }, 'x', null, 7]) {
        orgsAnswer = answer;
        const source = (await createSource(`grafana ${JSON.stringify(answer)}`, 'grafana', { base_url: url, api_token: 'glsa_1' })).body;
        const response = await server.request('GET', `/sources/${source.id}/test`, { token: owner.token });
        expect(response.status, response.text).toBe(422);
        expect(response.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'upstream_error' } });
        expect(response.body.error.message).toContain('unexpected shape');
        for (const leak of LEAKS) expect(response.text).not.toContain(leak);
      }
      orgsAnswer = [{ orgId: 1, name: 'Main Org.', role: 'Viewer' }];
      const good = (await createSource('grafana good', 'grafana', { base_url: url, api_token: 'glsa_1' })).body;
      expect((await server.request('GET', `/sources/${good.id}/test`, { token: owner.token })).status).toBe(200);
    });
  });

  it('a kubeconfig document of another shape is refused by /test as invalid_config, without the TypeError text', async () => {
    for (const kubeconfig of ['null', '{"clusters":[null]}', 'clusters: [1, 2]']) {
      const source = (await createSource(`kube ${kubeconfig}`, 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig } })).body;
      const response = await server.request('GET', `/sources/${source.id}/test`, { token: owner.token });
      expect(response.status, response.text).toBe(422);
      expect(response.body.error.details).toMatchObject({ reason: 'invalid_config', field: 'auth.kubeconfig' });
      for (const leak of LEAKS) expect(response.text).not.toContain(leak);
    }
  });
});
