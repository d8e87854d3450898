/**
 * The kubernetes connector against the fake API server, through the official
 * client: conformance kit, validation, every tool, paging, 429 retry, sync.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ListGraphSink } from '../helpers/tools.js';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import type { ToolContext } from '../../connectors/contract.js';
import { createKubernetesPlugin } from '../../connectors/kubernetes/index.js';
import { loadPlugins } from '../../connectors/loader.js';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer } from '../fakes/kubernetes/server.js';

const fake = await startFakeKubeServer(sampleCluster());
afterAll(() => fake.close());

const plugin = createKubernetesPlugin();
const config = { auth: { kind: 'kubeconfig', kubeconfig: fake.kubeconfig() } };
const toolOf = (name: string) => plugin.tools.find((t) => t.name === name)!;
const ctx = (overrides: Partial<ToolContext> = {}): ToolContext => ({
  orgId: 'org_k8s',
  sourceId: 'src_k8s',
  config,
  signal: new AbortController().signal,
  ...overrides,
});
/** runs a tool with its schema defaults filled the way the catalog does */
const run = async (name: string, args: Record<string, unknown>) => {
  const catalog = createCatalog(registry, { sources: [{ id: 'src_k8s', kind: 'kubernetes', name: 'prod cluster', config }] });
  const resolved = catalog.resolve(`kubernetes.${name}`, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.error));
  return catalog.run(resolved, { orgId: 'org_k8s', signal: new AbortController().signal });
};
const registry = await loadPlugins({ builtins: [plugin], pluginsFile: new URL('../../plugins.json', import.meta.url).pathname });

beforeEach(() => {
  fake.denied.clear();
  fake.forbidReviews = false;
  fake.throttleNext(0);
});

describeConnectorConformance(plugin, {
  validConfig: config,
  invalidConfig: { auth: { kind: 'kubeconfig', kubeconfig: fake.kubeconfig('wrong-token') } },
  orgId: 'org_k8s',
  toolCalls: [
    { tool: 'list_namespaces', args: { limit: 100 } },
    { tool: 'list_pods', args: { namespace: 'payments', limit: 100 } },
    { tool: 'list_events', args: { type: 'Warning', limit: 100 } },
    { tool: 'pod_logs', args: { namespace: 'payments', pod: 'api-7d9f-fghij', tail_lines: 2, previous: false } },
    { tool: 'describe', args: { kind: 'pod', namespace: 'payments', name: 'nope' }, expect: { error_code: 'not_found' } },
    { tool: 'rollout_restart', args: { namespace: 'payments', deployment: 'worker' } },
  ],
});

describe('kubernetes validate', () => {
  it('accepts working credentials and reports the server version', async () => {
    const result = await plugin.validate(config, new AbortController().signal);
    expect(result).toEqual({ ok: true, details: { server_version: 'v1.30.2', server: fake.url } });
  });

  it('refuses a token the API server does not accept, saying so', async () => {
    const result = await plugin.validate({ auth: { kind: 'kubeconfig', kubeconfig: fake.kubeconfig('stale') } }, new AbortController().signal);
    expect(result.ok).toBe(false);
    expect(result.details).toMatchObject({ reason: 'unauthorized', status: 401, server: fake.url });
  });

  it('names the permissions the credentials lack, and only reports a missing write permission', async () => {
    fake.denied.add('list pods').add('get pods/log');
    const refused = await plugin.validate(config, new AbortController().signal);
    expect(refused).toMatchObject({ ok: false, details: { reason: 'missing_permissions', missing_permissions: ['list pods', 'get pods/log'] } });

    fake.denied.clear();
    fake.denied.add('patch apps/deployments');
    const accepted = await plugin.validate(config, new AbortController().signal);
    expect(accepted).toMatchObject({ ok: true, details: { missing_write_permissions: ['patch apps/deployments'] } });
  });

  it('falls back to listing namespaces when access reviews are forbidden', async () => {
    fake.forbidReviews = true;
    expect((await plugin.validate(config, new AbortController().signal)).ok).toBe(true);
    fake.denied.add('list namespaces');
    expect(await plugin.validate(config, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'missing_permissions', missing_permissions: ['list namespaces'] },
    });
  });

  it('refuses in_cluster auth outside a pod, naming the field', async () => {
    expect(await plugin.validate({ auth: { kind: 'in_cluster' } }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'invalid_config', field: 'auth.kind' },
    });
  });

  it('refuses a kubeconfig that cannot be read, and a server that cannot be reached', async () => {
    const unreadable = await plugin.validate({ auth: { kind: 'kubeconfig', kubeconfig: '{ not yaml: [' } }, new AbortController().signal);
    expect(unreadable).toMatchObject({ ok: false, details: { reason: 'invalid_config', field: 'auth.kubeconfig' } });
    const unreachable = await plugin.validate({ ...config, base_url: 'http://127.0.0.1:9' }, new AbortController().signal);
    expect(unreachable).toMatchObject({ ok: false, details: { reason: 'upstream_unreachable' } });
  });
});

describe('kubernetes tools', () => {
  it('lists pods page by page with limit/continue, restarts and waiting reasons', async () => {
    const first = (await toolOf('list_pods').run({ limit: 3 }, ctx())) as { items: any[]; next_continue: string | null };
    expect(first.items.map((p) => p.name)).toEqual(['api-7d9f-abcde', 'api-7d9f-fghij', 'worker-55c-xyz12']);
    expect(first.next_continue).toEqual(expect.any(String));
    const second = (await toolOf('list_pods').run({ limit: 3, continue: first.next_continue }, ctx())) as { items: any[]; next_continue: string | null };
    expect(second).toMatchObject({ items: [{ name: 'hello-1', namespace: 'default' }], next_continue: null });

    const crashing = first.items[1];
    expect(crashing).toMatchObject({ ready: '0/1', restarts: 7, owner: { kind: 'ReplicaSet', name: 'api-7d9f' } });
    expect(crashing.containers[0]).toMatchObject({ state: 'waiting', reason: 'CrashLoopBackOff', last_termination_reason: 'OOMKilled' });
    expect(fake.requests.some((r) => r.url === '/api/v1/pods?limit=3')).toBe(true);
  });

  it('filters pods of a namespace by label selector', async () => {
    const outcome = await run('list_pods', { namespace: 'payments', label_selector: 'app=worker' });
    expect(outcome).toMatchObject({ result: { items: [{ name: 'worker-55c-xyz12', ready: '2/2', restarts: 0 }], next_continue: null } });
  });

  it('lists warning events by default, all events on request, and events about one object', async () => {
    const warnings = (await run('list_events', {})) as { result: { items: any[] } };
    expect(warnings.result.items.map((e) => e.reason)).toEqual(['BackOff', 'Unhealthy']);
    const all = (await run('list_events', { namespace: 'payments', type: 'all' })) as { result: { items: any[] } };
    expect(all.result.items.map((e) => e.reason)).toEqual(['BackOff', 'ScalingReplicaSet']);
    const one = (await run('list_events', { object_name: 'hello-1' })) as { result: { items: any[] } };
    expect(one.result.items).toEqual([
      expect.objectContaining({ object: 'Pod/hello-1', type: 'Warning', count: 3, message: 'Readiness probe failed: HTTP probe failed with statuscode: 503' }),
    ]);
  });

  it('lists namespaces in pages', async () => {
    const first = await run('list_namespaces', { limit: 2 });
    expect(first).toMatchObject({ result: { items: [{ name: 'default', phase: 'Active' }, { name: 'payments' }], next_continue: expect.any(String) } });
  });

  it('tails a pod log, and passes the API server refusal through when the container must be named', async () => {
    const outcome = await run('pod_logs', { namespace: 'payments', pod: 'api-7d9f-fghij', tail_lines: 2 });
    expect(outcome).toEqual({ result: { lines: 2, text: 'line 299: ok\nline 300: FATAL out of memory\n' } });
    const ambiguous = await run('pod_logs', { namespace: 'payments', pod: 'worker-55c-xyz12' });
    expect(ambiguous).toMatchObject({ error: { code: 'bad_request', message: expect.stringContaining('a container name must be specified') } });
  });

  it('describes a deployment with its status conditions and events', async () => {
    const outcome = (await run('describe', { kind: 'deployment', namespace: 'payments', name: 'api' })) as { result: any };
    expect(outcome.result).toMatchObject({
      kind: 'deployment',
      name: 'api',
      replicas: 2,
      containers: [{ name: 'api', image: 'registry.local/api:1.4.2' }],
      status: { ready_replicas: 1, conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }] },
      events: [{ reason: 'ScalingReplicaSet', object: 'Deployment/api' }],
    });
    const pod = (await run('describe', { kind: 'pod', namespace: 'payments', name: 'api-7d9f-fghij' })) as { result: any };
    expect(pod.result).toMatchObject({ kind: 'pod', restarts: 7, events: [{ reason: 'BackOff', count: 42 }] });
  });

  it('restarts a deployment like kubectl: a strategic merge patch of the template annotation', async () => {
    const outcome = (await run('rollout_restart', { namespace: 'payments', deployment: 'api' })) as { result: any };
    expect(outcome.result.restarted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const patch = fake.requests.filter((r) => r.method === 'PATCH').at(-1)!;
    expect(patch).toEqual({ method: 'PATCH', url: '/apis/apps/v1/namespaces/payments/deployments/api', contentType: 'application/strategic-merge-patch+json' });
    const stored = fake.state.deployments.find((d) => d['metadata'].name === 'api')!;
    expect(stored['spec'].template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBe(outcome.result.restarted_at);
    expect(stored['spec'].template.metadata.labels).toEqual({ app: 'api' });
    expect(outcome.result.deployment.restarted_at).toBe(outcome.result.restarted_at);
  });

  it('answers forbidden when the credentials may not patch, and not_found for a missing deployment', async () => {
    fake.denied.add('patch apps/deployments');
    expect(await run('rollout_restart', { namespace: 'payments', deployment: 'api' })).toMatchObject({
      error: { code: 'forbidden', details: { status: 403 } },
    });
    expect(await run('rollout_restart', { namespace: 'payments', deployment: 'ghost' })).toMatchObject({ error: { code: 'not_found' } });
  });

  it('retries a 429 after its Retry-After, and gives up with rate_limited_upstream when throttling persists', async () => {
    fake.throttleNext(1, 1);
    const before = fake.requests.length;
    expect(await run('list_namespaces', {})).toMatchObject({ result: { items: expect.arrayContaining([expect.objectContaining({ name: 'payments' })]) } });
    expect(fake.requests.length - before).toBe(2);

    fake.throttleNext(10, 0);
    expect(await run('list_namespaces', {})).toMatchObject({ error: { code: 'rate_limited_upstream', details: { status: 429, reason: 'TooManyRequests' } } });
  });

  it('sends the calls to base_url when it is set, whatever server the kubeconfig names', async () => {
    const elsewhere = fake.kubeconfig().replace(fake.url, 'http://127.0.0.1:9');
    const outcome = await toolOf('list_namespaces').run(
      { limit: 1 },
      ctx({ config: { auth: { kind: 'kubeconfig', kubeconfig: elsewhere }, base_url: `${fake.url}/` } }),
    );
    expect(outcome).toMatchObject({ items: [{ name: 'default' }] });
  });

  it('a source whose auth lacks the kubeconfig is misconfigured (the config schema says so)', async () => {
    const catalog = createCatalog(registry, { sources: [{ id: 'src_bad', kind: 'kubernetes', name: 'bad', config: { auth: { kind: 'kubeconfig' } } }] });
    const resolved = catalog.resolve('kubernetes.list_namespaces', {});
    if (!resolved.ok) throw new Error(JSON.stringify(resolved.error));
    expect(await catalog.run(resolved, { orgId: 'org_k8s', signal: new AbortController().signal })).toMatchObject({ error: { code: 'source_misconfigured' } });
  });

  it('answers unauthorized when the token is refused', async () => {
    const refused = await toolOf('list_namespaces')
      .run({ limit: 10 }, ctx({ config: { auth: { kind: 'kubeconfig', kubeconfig: fake.kubeconfig('stale') } } }))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'ToolError', code: 'unauthorized' });
  });
});

describe('kubernetes sync', () => {
  it('writes namespaces, deployments as services, pods, owners and their relationships', async () => {
    const graph = new ListGraphSink();
    const progress: number[] = [];
    const report = await plugin.sync!({
      orgId: 'org_k8s',
      sourceId: 'src_k8s',
      realm: 'default',
      config,
      signal: new AbortController().signal,
      graph,
      progress: (fraction) => progress.push(fraction),
    });
    const keys = (label: string) => graph.nodes.filter((n) => n.label === label).map((n) => n.properties._key);
    expect(keys('Namespace')).toEqual(['default', 'payments', 'kube-system']);
    expect(keys('Service')).toEqual(['payments/api', 'payments/worker']);
    expect(keys('Pod').sort()).toEqual(['default/hello-1', 'payments/api-7d9f-abcde', 'payments/api-7d9f-fghij', 'payments/worker-55c-xyz12']);
    expect(keys('Owner')).toEqual(['payments-core']);
    const rel = (type: string) => graph.relationships.filter((r) => r.type === type).map((r) => `${r.from_key}->${r.to_key}`);
    expect(rel('MANAGES').sort()).toEqual([
      'payments/api->payments/api-7d9f-abcde',
      'payments/api->payments/api-7d9f-fghij',
      'payments/worker->payments/worker-55c-xyz12',
    ]);
    expect(rel('OWNS')).toEqual(['payments-core->payments/api']);
    expect(rel('IN_NAMESPACE')).toContain('payments/api->payments');
    expect(report).toEqual({
      nodes: graph.nodes.length,
      relationships: graph.relationships.length,
      details: { namespaces: 3, services: 2, pods: 4, owners: 1 },
    });
    expect(progress.at(-1)).toBe(1);
    expect(graph.nodes.find((n) => n.properties._key === 'payments/api-7d9f-fghij')!.properties).toMatchObject({ phase: 'Running', restarts: 7 });
  });

  it('reads only the configured namespaces, and counts without a graph store', async () => {
    const report = await plugin.sync!({
      orgId: 'org_k8s',
      sourceId: 'src_k8s',
      realm: 'default',
      config: { ...config, namespaces: ['default'] },
      signal: new AbortController().signal,
      graph: null,
      progress: () => undefined,
    });
    expect(report.details).toEqual({ namespaces: 1, services: 0, pods: 1, owners: 0 });
  });
});
