/** The grafana connector against the fake Grafana: conformance kit, validation, every tool, paging, 429 retry. */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { createGrafanaPlugin } from '../../connectors/grafana/index.js';
import { checkPlugin, createRegistry } from '../../connectors/loader.js';
import { seedGrafana, startFakeGrafanaServer } from '../fakes/grafana/server.js';

const fake = await startFakeGrafanaServer();
seedGrafana(fake);
fake.tokens.set('glsa_viewer', { login: 'sa-agent-viewer', role: 'Viewer' });
fake.tokens.set('glsa_editor', { login: 'sa-agent-editor', role: 'Editor' });
fake.tokens.set('glsa_none', { login: 'sa-agent-none', role: 'None' });
fake.tokens.set('eyJrIjoi_viewer_key', { login: 'api-key', role: 'Viewer', apiKey: true });
fake.tokens.set('eyJrIjoi_no_role_key', { login: 'api-key', role: 'None', apiKey: true });
afterAll(() => fake.close());

const plugin = createGrafanaPlugin();
const viewer = { base_url: fake.url, api_token: 'glsa_viewer' };
const editor = { base_url: `${fake.url}/`, api_token: 'glsa_editor' };
const registry = createRegistry([checkPlugin(plugin, 'built-in')]);

const run = (name: string, args: Record<string, unknown>, config: Record<string, unknown> = viewer) => {
  const catalog = createCatalog(registry, { sources: [{ id: 'src_graf', kind: 'grafana', name: 'Grafana', config }] });
  const resolved = catalog.resolve(`grafana.${name}`, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.error));
  return catalog.run(resolved, { orgId: 'org_graf', signal: new AbortController().signal });
};

beforeEach(() => fake.throttleNext(0));

describeConnectorConformance(plugin, {
  validConfig: editor,
  invalidConfig: { base_url: fake.url, api_token: 'glsa_revoked' },
  toolCalls: [
    { tool: 'search_dashboards', args: { query: 'api' } },
    { tool: 'get_dashboard', args: { uid: 'missing' }, expect: { error_code: 'not_found' } },
    { tool: 'list_firing_alerts', args: {} },
    { tool: 'list_datasources', args: {} },
    { tool: 'query_datasource', args: { datasource_uid: 'prom-main', query: { expr: 'up' }, from: 'now-1h', to: 'now', max_data_points: 3 } },
  ],
});

describe('grafana validate', () => {
  it('accepts a Viewer service-account token and reports its role', async () => {
    expect(await plugin.validate(viewer, new AbortController().signal)).toEqual({
      ok: true,
      details: { login: 'sa-agent-viewer', role: 'Viewer', org_id: 1, org_name: 'Main Org.' },
    });
  });

  it('refuses a revoked token (401) and a token without a role, naming the role needed', async () => {
    expect(await plugin.validate({ base_url: fake.url, api_token: 'glsa_gone' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'unauthorized', status: 401, body: expect.stringContaining('api-key.invalid') },
    });
    expect(await plugin.validate({ base_url: fake.url, api_token: 'glsa_none' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'insufficient_role', role: 'None', required_role: 'Viewer' },
    });
  });

  it('checks a token with no user behind it (an API key) by reading dashboards', async () => {
    expect(await plugin.validate({ base_url: fake.url, api_token: 'eyJrIjoi_viewer_key' }, new AbortController().signal)).toMatchObject({
      ok: true,
      details: { login: null, role: 'Viewer or above' },
    });
    expect(await plugin.validate({ base_url: fake.url, api_token: 'eyJrIjoi_no_role_key' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'insufficient_role', required_role: 'Viewer', missing_permission: 'dashboards:read' },
    });
  });

  it('refuses a base_url where no Grafana answers', async () => {
    expect(await plugin.validate({ base_url: 'http://127.0.0.1:9', api_token: 'glsa_viewer' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'upstream_unreachable' },
    });
  });
});

describe('grafana tools', () => {
  it('searches dashboards page by page', async () => {
    const first = (await run('search_dashboards', { tags: ['prod'], limit: 3 })) as { result: any };
    expect(first.result).toMatchObject({ page: 1, next_page: 2 });
    expect(first.result.items.map((d: any) => d.uid)).toEqual(['api-overview', 'svc-0', 'svc-1']);
    expect(first.result.items[0]).toEqual({
      uid: 'api-overview',
      title: 'API overview',
      url: '/d/api-overview/api-overview',
      tags: ['api', 'prod'],
      folder: 'Operations',
    });
    const second = (await run('search_dashboards', { tags: ['prod'], limit: 3, page: 2 })) as { result: any };
    expect(second.result).toMatchObject({ page: 2, next_page: null, items: [{ uid: 'svc-2' }, { uid: 'svc-3' }] });
    expect(fake.requests.at(-1)!.url).toBe('/api/search?type=dash-db&tag=prod&page=2&limit=3');
  });

  it('reads a dashboard with its panels, collapsed rows flattened, and their queries', async () => {
    const outcome = (await run('get_dashboard', { uid: 'api-overview' })) as { result: any };
    expect(outcome.result).toMatchObject({ uid: 'api-overview', title: 'API overview', version: 4, folder: 'Operations' });
    expect(outcome.result.panels).toEqual([
      {
        id: 1,
        type: 'timeseries',
        title: 'Request rate',
        row: null,
        datasource: 'prom-main',
        queries: [{ refId: 'A', expr: 'sum(rate(http_requests_total{job="api"}[5m]))', datasource: 'prom-main' }],
      },
      {
        id: 3,
        type: 'stat',
        title: '5xx ratio',
        row: 'Errors',
        datasource: 'prom-main',
        queries: [{ refId: 'A', expr: 'sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m]))', datasource: null }],
      },
    ]);
  });

  it('lists the firing alerts, silenced ones only on request, narrowed by matchers', async () => {
    const firing = (await run('list_firing_alerts', {})) as { result: any };
    expect(firing.result).toEqual({
      count: 1,
      alerts: [
        {
          name: 'HighErrorRate',
          state: 'active',
          labels: { alertname: 'HighErrorRate', severity: 'critical', service: 'api', grafana_folder: 'Operations' },
          summary: 'API 5xx ratio above 5%',
          description: '5xx ratio is 7.2% over 5m',
          since: '2026-11-22T05:00:00Z',
          fingerprint: 'a1b2c3',
          url: 'http://grafana.local/alerting/grafana/err-rate/view',
        },
      ],
    });
    expect(fake.requests.at(-1)!.url).toBe('/api/alertmanager/grafana/api/v2/alerts?active=true&silenced=false&inhibited=false');
    const all = (await run('list_firing_alerts', { include_silenced: true, matchers: ['service="db"'] })) as { result: any };
    expect(all.result.alerts.map((a: any) => [a.name, a.state])).toEqual([['DiskFilling', 'suppressed']]);
  });

  it('lists data sources for an Editor, and says forbidden for a Viewer', async () => {
    expect(await run('list_datasources', {}, editor)).toMatchObject({
      result: {
        items: [
          { uid: 'prom-main', name: 'Prometheus', type: 'prometheus', is_default: true },
          { uid: 'loki-main', type: 'loki', is_default: false },
        ],
      },
    });
    expect(await run('list_datasources', {})).toMatchObject({
      error: { code: 'forbidden', details: { status: 403, body: expect.stringContaining('datasources:read') } },
    });
  });

  it('queries a data source and returns its frames, newest points kept', async () => {
    const outcome = (await run('query_datasource', { datasource_uid: 'prom-main', query: { expr: 'up{job="api"}' }, max_data_points: 250 })) as { result: any };
    const [frame] = outcome.result.frames;
    expect(frame).toMatchObject({ name: 'up{job="api"}', truncated: true });
    expect(frame.fields.map((f: any) => [f.name, f.type, f.values.length])).toEqual([
      ['Time', 'time', 200],
      ['Value', 'number', 200],
    ]);
    expect(frame.fields[1].labels).toEqual({ job: 'api', instance: 'api-1:9090' });
    expect(frame.fields[1].values.at(-1)).toBe(124.5);
    expect(fake.requests.at(-1)!.body).toEqual({
      queries: [{ refId: 'A', datasource: { uid: 'prom-main' }, maxDataPoints: 250, expr: 'up{job="api"}' }],
      from: 'now-1h',
      to: 'now',
    });
  });

  it('reports the data source refusal of a bad query as query_failed, and an unknown data source as not_found', async () => {
    expect(await run('query_datasource', { datasource_uid: 'prom-main', query: { expr: 'sum(((' } })).toMatchObject({
      error: { code: 'query_failed', message: expect.stringContaining('parse error'), details: { status: 400 } },
    });
    expect(await run('query_datasource', { datasource_uid: 'nope', query: { expr: 'up' } })).toMatchObject({ error: { code: 'not_found' } });
  });

  it('retries a 429 after its Retry-After, and gives up with rate_limited_upstream when throttling persists', async () => {
    fake.throttleNext(1, 1);
    const before = fake.requests.length;
    expect(await run('list_firing_alerts', {})).toMatchObject({ result: { count: 1 } });
    expect(fake.requests.length - before).toBe(2);
    fake.throttleNext(10, 0);
    expect(await run('search_dashboards', {})).toMatchObject({ error: { code: 'rate_limited_upstream', details: { status: 429 } } });
  });

  it('answers unauthorized for a revoked token', async () => {
    expect(await run('search_dashboards', {}, { base_url: fake.url, api_token: 'glsa_gone' })).toMatchObject({ error: { code: 'unauthorized' } });
  });
});
