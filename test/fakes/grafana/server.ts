/**
 * A fake Grafana (plain HTTP on 127.0.0.1) with the real shapes of what the
 * connector calls: /api/user, /api/user/orgs, /api/search (page/limit),
 * /api/dashboards/uid/:uid, the Grafana Alertmanager alerts API,
 * /api/datasources and POST /api/ds/query. Bearer service-account tokens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, Throttle } from '../upstream.js';

type Json = Record<string, any>;

export interface FakeGrafanaAccount {
  readonly login: string;
  readonly role: 'None' | 'Viewer' | 'Editor' | 'Admin';
  /** an organization API key: no user behind it, so /api/user answers 404 */
  readonly apiKey?: boolean;
}

export interface FakeGrafanaServer {
  readonly url: string;
  /** token -> the service account it authenticates */
  readonly tokens: Map<string, FakeGrafanaAccount>;
  readonly dashboards: Json[];
  readonly alerts: Json[];
  readonly requests: { method: string; url: string; body: unknown }[];
  /** answer the next n requests with 429 + Retry-After */
  throttleNext(n?: number, retryAfterSeconds?: number): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const grafanaError = (statusCode: number, message: string, messageId: string): Json => ({ extra: null, message, messageId, statusCode, traceID: '' });

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text === '' ? undefined : JSON.parse(text);
}

export const DATASOURCES = [
  {
    id: 1,
    uid: 'prom-main',
    orgId: 1,
    name: 'Prometheus',
    type: 'prometheus',
    typeName: 'Prometheus',
    access: 'proxy',
    url: 'http://prometheus:9090',
    isDefault: true,
    readOnly: false,
    jsonData: {},
  },
  {
    id: 2,
    uid: 'loki-main',
    orgId: 1,
    name: 'Loki',
    type: 'loki',
    typeName: 'Loki',
    access: 'proxy',
    url: 'http://loki:3100',
    isDefault: false,
    readOnly: false,
    jsonData: {},
  },
];

/** a Prometheus time series as Grafana's data frames carry it */
function frameOf(expr: string, points: number): Json {
  const times = Array.from({ length: points }, (_, i) => 1_763_700_000_000 + i * 60_000);
  return {
    schema: {
      name: expr,
      refId: 'A',
      meta: { type: 'timeseries-multi', typeVersion: [0, 1] },
      fields: [
        { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' } },
        { name: 'Value', type: 'number', typeInfo: { frame: 'float64' }, labels: { job: 'api', instance: 'api-1:9090' } },
      ],
    },
    data: { values: [times, times.map((_, i) => i * 0.5)] },
  };
}

export async function startFakeGrafanaServer(): Promise<FakeGrafanaServer> {
  const tokens = new Map<string, FakeGrafanaAccount>();
  const dashboards: Json[] = [];
  const alerts: Json[] = [];
  const requests: FakeGrafanaServer['requests'] = [];
  const throttle = new Throttle();

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = await readBody(req);
      requests.push({ method: req.method ?? 'GET', url: url.pathname + url.search, body });
      const auth = req.headers.authorization ?? '';
      const account = auth.startsWith('Bearer ') ? tokens.get(auth.slice(7)) : undefined;
      if (!account) return send(res, 401, grafanaError(401, 'invalid API key', 'api-key.invalid'));
      const retryAfter = throttle.take();
      if (retryAfter !== null) {
        return send(res, 429, grafanaError(429, 'Too many requests', 'api.rate-limited'), { 'retry-after': String(retryAfter) });
      }
      const canView = account.role !== 'None';
      const path = url.pathname;
      const q = url.searchParams;

      if ((path === '/api/user' || path === '/api/user/orgs') && account.apiKey === true) return send(res, 404, { message: 'User not found' });
      if (path === '/api/user') {
        return send(res, 200, {
          id: 7,
          uid: 'sa-uid',
          email: `sa-1-${account.login}`,
          name: account.login,
          login: account.login,
          theme: '',
          orgId: 1,
          isGrafanaAdmin: false,
          isDisabled: false,
          isExternal: false,
          isExternallySynced: false,
          isGrafanaAdminExternallySynced: false,
          authLabels: [],
          updatedAt: '2026-11-01T00:00:00Z',
          createdAt: '2026-11-01T00:00:00Z',
          avatarUrl: '',
        });
      }
      if (path === '/api/user/orgs') return send(res, 200, [{ orgId: 1, name: 'Main Org.', role: account.role }]);
      if (!canView)
        return send(
          res,
          403,
          grafanaError(403, "You'll need additional permissions to perform this action. Permissions needed: dashboards:read", 'accesscontrol.unauthorized'),
        );

      if (path === '/api/search') {
        const words = (q.get('query') ?? '').toLowerCase();
        const tags = q.getAll('tag');
        const limit = Number(q.get('limit') ?? '1000');
        const page = Number(q.get('page') ?? '1');
        const hits = dashboards
          .filter((d) => d['title'].toLowerCase().includes(words) && tags.every((t) => d['tags'].includes(t)))
          .map((d) => ({
            id: d['id'],
            uid: d['uid'],
            title: d['title'],
            uri: `db/${d['uid']}`,
            url: `/d/${d['uid']}/${d['title'].toLowerCase().replace(/\W+/g, '-')}`,
            slug: '',
            type: 'dash-db',
            tags: d['tags'],
            isStarred: false,
            folderId: 3,
            folderUid: 'ops',
            folderTitle: 'Operations',
            folderUrl: '/dashboards/f/ops/',
            sortMeta: 0,
          }));
        return send(res, 200, hits.slice((page - 1) * limit, page * limit));
      }
      const dashboard = path.match(/^\/api\/dashboards\/uid\/([^/]+)$/);
      if (dashboard) {
        const found = dashboards.find((d) => d['uid'] === decodeURIComponent(dashboard[1]!));
        if (!found) return send(res, 404, { message: 'Dashboard not found', messageId: 'dashboards.not-found', statusCode: 404, traceID: '' });
        return send(res, 200, {
          meta: {
            type: 'db',
            canSave: account.role !== 'Viewer',
            slug: found['uid'],
            url: `/d/${found['uid']}/x`,
            folderTitle: 'Operations',
            updated: '2026-11-20T08:00:00Z',
            version: found['version'],
          },
          dashboard: found,
        });
      }
      if (path === '/api/alertmanager/grafana/api/v2/alerts') {
        const silenced = q.get('silenced') !== 'false';
        const matchers = q.getAll('filter').map((f) => f.match(/^(\w+)="(.*)"$/)!);
        const answer = alerts.filter((a) => (silenced || a['status'].state !== 'suppressed') && matchers.every((m) => a['labels'][m[1]!] === m[2]));
        return send(res, 200, answer);
      }
      if (path === '/api/datasources') {
        if (account.role === 'Viewer') {
          return send(
            res,
            403,
            grafanaError(403, "You'll need additional permissions to perform this action. Permissions needed: datasources:read", 'accesscontrol.unauthorized'),
          );
        }
        return send(res, 200, DATASOURCES);
      }
      if (path === '/api/ds/query' && req.method === 'POST') {
        const request = body as { queries: Json[] };
        const query = request.queries[0]!;
        if (!DATASOURCES.some((ds) => ds.uid === query['datasource']?.uid)) {
          return send(res, 404, { message: 'Data source not found', messageId: 'datasource.not-found', statusCode: 404, traceID: '' });
        }
        if (String(query['expr']).includes('(((')) {
          return send(res, 400, { results: { A: { status: 400, error: 'bad_data: 1:4: parse error: unexpected end of input', errorSource: 'downstream' } } });
        }
        return send(res, 200, { results: { A: { status: 200, frames: [frameOf(String(query['expr']), Number(query['maxDataPoints'] ?? 10))] } } });
      }
      return send(res, 404, { message: 'Not found' });
    })().catch((error: unknown) => send(res, 500, { message: String(error) }));
  });
  return {
    url: await listenOnLoopback(server),
    tokens,
    dashboards,
    alerts,
    requests,
    throttleNext: (n?: number, retryAfterSeconds?: number) => throttle.next(n, retryAfterSeconds),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** dashboards and alerts of a small operations team */
export function seedGrafana(fake: FakeGrafanaServer): void {
  fake.dashboards.push(
    {
      id: 11,
      uid: 'api-overview',
      title: 'API overview',
      tags: ['api', 'prod'],
      version: 4,
      schemaVersion: 39,
      panels: [
        {
          id: 1,
          type: 'timeseries',
          title: 'Request rate',
          datasource: { type: 'prometheus', uid: 'prom-main' },
          gridPos: { h: 8, w: 12, x: 0, y: 0 },
          targets: [{ refId: 'A', expr: 'sum(rate(http_requests_total{job="api"}[5m]))', datasource: { type: 'prometheus', uid: 'prom-main' } }],
        },
        {
          id: 2,
          type: 'row',
          title: 'Errors',
          collapsed: true,
          gridPos: { h: 1, w: 24, x: 0, y: 8 },
          panels: [
            {
              id: 3,
              type: 'stat',
              title: '5xx ratio',
              datasource: { type: 'prometheus', uid: 'prom-main' },
              targets: [{ refId: 'A', expr: 'sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m]))' }],
            },
          ],
        },
      ],
    },
    ...Array.from({ length: 4 }, (_, i) => ({ id: 20 + i, uid: `svc-${i}`, title: `Service ${i} latency`, tags: ['prod'], version: 1, panels: [] })),
  );
  fake.alerts.push(
    {
      labels: { alertname: 'HighErrorRate', severity: 'critical', service: 'api', grafana_folder: 'Operations' },
      annotations: { summary: 'API 5xx ratio above 5%', description: '5xx ratio is 7.2% over 5m' },
      startsAt: '2026-11-22T05:00:00Z',
      endsAt: '2026-11-22T06:00:00Z',
      updatedAt: '2026-11-22T05:30:00Z',
      fingerprint: 'a1b2c3',
      generatorURL: 'http://grafana.local/alerting/grafana/err-rate/view',
      receivers: [{ name: 'oncall' }],
      status: { state: 'active', silencedBy: [], inhibitedBy: [] },
    },
    {
      labels: { alertname: 'DiskFilling', severity: 'warning', service: 'db' },
      annotations: { summary: 'Disk 85% full' },
      startsAt: '2026-11-22T03:00:00Z',
      endsAt: '2026-11-22T06:00:00Z',
      updatedAt: '2026-11-22T05:30:00Z',
      fingerprint: 'd4e5f6',
      generatorURL: 'http://grafana.local/alerting/grafana/disk/view',
      receivers: [{ name: 'oncall' }],
      status: { state: 'suppressed', silencedBy: ['silence-1'], inhibitedBy: [] },
    },
  );
}
