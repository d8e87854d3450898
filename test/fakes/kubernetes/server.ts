/**
 * A fake Kubernetes API server (plain HTTP on 127.0.0.1) speaking the real
 * wire format for what the connector uses: /version, SelfSubjectAccessReview,
 * v1 NamespaceList / PodList / EventList with `limit` + `metadata.continue`,
 * pod log text, apps/v1 Deployment list/GET/PATCH (strategic merge patch),
 * and `Status` objects for errors. Bearer-token auth.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, Throttle } from '../upstream.js';

type Json = Record<string, any>;

export interface FakeKubeState {
  namespaces: Json[];
  pods: Json[];
  events: Json[];
  deployments: Json[];
  /** pod log text by `namespace/pod/container` (container '' = the only one) */
  logs: Record<string, string>;
}

export interface FakeKubeServer {
  readonly url: string;
  readonly token: string;
  readonly state: FakeKubeState;
  /** every request: method, path with query, content type */
  readonly requests: { method: string; url: string; contentType: string | undefined }[];
  /** permissions (`verb group/resource[/sub]`) SelfSubjectAccessReview denies */
  readonly denied: Set<string>;
  /** answer the next n requests with 429 + Retry-After */
  throttleNext(n?: number, retryAfterSeconds?: number): void;
  /** forbid SelfSubjectAccessReview itself (403) */
  forbidReviews: boolean;
  kubeconfig(token?: string): string;
  close(): Promise<void>;
}

const status = (code: number, reason: string, message: string): Json => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  code,
});

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
  res.end(text);
}

/** `limit` + opaque `continue` (base64 offset), as the API server pages lists */
function page(items: Json[], query: URLSearchParams, kind: string, apiVersion: string): Json {
  const limit = Number(query.get('limit') ?? '0');
  const token = query.get('continue');
  const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
  const end = limit > 0 ? start + limit : items.length;
  const metadata: Json = { resourceVersion: '1000' };
  if (end < items.length) {
    metadata['continue'] = Buffer.from(String(end)).toString('base64url');
    metadata['remainingItemCount'] = items.length - end;
  }
  return { kind, apiVersion, metadata, items: items.slice(start, end) };
}

/** the subset of field selectors the API server supports for events: `a.b=value` pairs */
function fieldSelected(item: Json, selector: string | null): boolean {
  if (!selector) return true;
  return selector.split(',').every((clause) => {
    const [path, value] = clause.split('=') as [string, string];
    const actual = path.split('.').reduce<any>((at, key) => at?.[key], item);
    return String(actual) === value;
  });
}

function labelSelected(item: Json, selector: string | null): boolean {
  if (!selector) return true;
  const labels = item['metadata']?.labels ?? {};
  return selector.split(',').every((clause) => {
    const [key, value] = clause.split('=') as [string, string];
    return labels[key] === value;
  });
}

function mergePatch(target: Json, patch: Json): Json {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete target[key];
    else if (typeof value === 'object' && !Array.isArray(value)) target[key] = mergePatch(target[key] ?? {}, value as Json);
    else target[key] = value;
  }
  return target;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

export async function startFakeKubeServer(state: FakeKubeState, token = 'fake-kube-token'): Promise<FakeKubeServer> {
  const requests: FakeKubeServer['requests'] = [];
  const denied = new Set<string>();
  const throttle = new Throttle();
  const self = {
    forbidReviews: false,
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push({ method: req.method ?? 'GET', url: url.pathname + url.search, contentType: req.headers['content-type'] });
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
      const retryAfter = throttle.take();
      if (retryAfter !== null) {
        return send(res, 429, status(429, 'TooManyRequests', 'Too many requests, please try again later.'), { 'retry-after': String(retryAfter) });
      }
      const q = url.searchParams;
      const parts = url.pathname.split('/').filter(Boolean);
      const path = url.pathname;
      const inNs = (items: Json[], ns: string | undefined): Json[] => (ns === undefined ? items : items.filter((i) => i['metadata'].namespace === ns));

      if (path === '/version') return send(res, 200, { major: '1', minor: '30', gitVersion: 'v1.30.2', platform: 'linux/amd64' });
      if (path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews' && req.method === 'POST') {
        if (self.forbidReviews) {
          return send(
            res,
            403,
            status(
              403,
              'Forbidden',
              'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:ops:agent" cannot create resource',
            ),
          );
        }
        const review = JSON.parse(await body(req)) as Json;
        const a = review['spec'].resourceAttributes as Json;
        const label = `${a['verb']} ${a['group'] ? `${a['group']}/` : ''}${a['resource']}${a['subresource'] ? `/${a['subresource']}` : ''}`;
        const allowed = !denied.has(label);
        return send(res, 201, { ...review, status: { allowed, ...(allowed ? { reason: 'RBAC: allowed' } : {}) } });
      }
      if (path === '/api/v1/namespaces' && req.method === 'GET') {
        if (denied.has('list namespaces')) return send(res, 403, status(403, 'Forbidden', 'namespaces is forbidden: User cannot list resource "namespaces"'));
        return send(res, 200, page(state.namespaces, q, 'NamespaceList', 'v1'));
      }
      // /api/v1/pods, /api/v1/namespaces/:ns/pods[/:name[/log]], same for events
      const core = path.match(/^\/api\/v1\/(?:namespaces\/([^/]+)\/)?(pods|events)(?:\/([^/]+))?(\/log)?$/);
      if (core && req.method === 'GET') {
        const [, ns, resource, name, log] = core;
        if (resource === 'pods' && name !== undefined) {
          const pod = state.pods.find((p) => p['metadata'].namespace === ns && p['metadata'].name === name);
          if (!pod) return send(res, 404, status(404, 'NotFound', `pods "${name}" not found`));
          if (!log) return send(res, 200, pod);
          const containers = pod['spec'].containers as Json[];
          const container = q.get('container') ?? (containers.length === 1 ? containers[0]!['name'] : null);
          if (container === null) {
            return send(
              res,
              400,
              status(400, 'BadRequest', `a container name must be specified for pod ${name}, choose one of: [${containers.map((c) => c['name']).join(' ')}]`),
            );
          }
          const text = state.logs[`${ns}/${name}/${container}`] ?? '';
          const tail = Number(q.get('tailLines') ?? '0');
          const lines = text.replace(/\n$/, '').split('\n');
          return send(res, 200, tail > 0 ? `${lines.slice(-tail).join('\n')}\n` : text);
        }
        const items = inNs(resource === 'pods' ? state.pods : state.events, ns).filter(
          (item) => fieldSelected(item, q.get('fieldSelector')) && labelSelected(item, q.get('labelSelector')),
        );
        return send(res, 200, page(items, q, resource === 'pods' ? 'PodList' : 'EventList', 'v1'));
      }
      const apps = path.match(/^\/apis\/apps\/v1\/(?:namespaces\/([^/]+)\/)?deployments(?:\/([^/]+))?$/);
      if (apps) {
        const [, ns, name] = apps;
        if (name === undefined) return send(res, 200, page(inNs(state.deployments, ns), q, 'DeploymentList', 'apps/v1'));
        const deployment = state.deployments.find((d) => d['metadata'].namespace === ns && d['metadata'].name === name);
        if (!deployment) return send(res, 404, status(404, 'NotFound', `deployments.apps "${name}" not found`));
        if (req.method === 'GET') return send(res, 200, deployment);
        if (req.method === 'PATCH') {
          if (denied.has('patch apps/deployments')) {
            return send(res, 403, status(403, 'Forbidden', `deployments.apps "${name}" is forbidden: User cannot patch resource "deployments"`));
          }
          const type = req.headers['content-type'];
          if (type !== 'application/strategic-merge-patch+json' && type !== 'application/merge-patch+json') {
            return send(
              res,
              415,
              status(
                415,
                'UnsupportedMediaType',
                `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
              ),
            );
          }
          mergePatch(deployment, JSON.parse(await body(req)) as Json);
          deployment['metadata'].generation = Number(deployment['metadata'].generation ?? 1) + 1;
          return send(res, 200, deployment);
        }
      }
      void parts;
      return send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
    })().catch((error: unknown) => send(res, 500, status(500, 'InternalError', String(error))));
  });
  const url = await listenOnLoopback(server);
  return Object.assign(self, {
    url,
    token,
    state,
    requests,
    denied,
    throttleNext: (n?: number, retryAfterSeconds?: number) => throttle.next(n, retryAfterSeconds),
    kubeconfig(withToken = token) {
      return JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // plain HTTP: client-node requires insecure-skip-tls-verify for it, as for `kubectl proxy`
        clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'agent', user: { token: withToken } }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'agent', namespace: 'default' } }],
        'current-context': 'fake',
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
