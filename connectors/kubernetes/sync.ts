/**
 * ETL for a kubernetes source: namespaces, deployments (as `Service`), pods,
 * and owners named by labels/annotations, with the relationships between
 * them, written namespace by namespace into the graph.
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { GraphNodeInput, GraphRelationshipInput, SyncContext, SyncReport } from '../contract.js';
import { kubeCall, kubernetesApis, type KubernetesApis, type KubernetesConfig } from './client.js';

/** label / annotation keys whose value names the team or person owning a workload, first match wins */
const OWNER_KEYS = ['owner', 'team', 'app.kubernetes.io/owner', 'app.kubernetes.io/team'] as const;
const PAGE = 250;

/** Reads every page of a list call. */
async function readAll<T>(
  apis: KubernetesApis,
  signal: AbortSignal,
  list: (token: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await kubeCall(apis, signal, () => list(token));
    items.push(...page.items);
    token = page.metadata?._continue || undefined;
  } while (token !== undefined);
  return items;
}

function ownerOf(deployment: V1Deployment): string | null {
  const meta = deployment.metadata;
  for (const key of OWNER_KEYS) {
    const value = meta?.annotations?.[key] ?? meta?.labels?.[key];
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return null;
}

/** matchLabels selection, which is what Deployments created by kubectl and Helm use */
function selects(deployment: V1Deployment, pod: V1Pod): boolean {
  const wanted = Object.entries(deployment.spec?.selector.matchLabels ?? {});
  const labels = pod.metadata?.labels ?? {};
  return wanted.length > 0 && wanted.every(([key, value]) => labels[key] === value);
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

function namespaceGraph(namespace: string, deployments: V1Deployment[], pods: V1Pod[]): { nodes: GraphNodeInput[]; relationships: GraphRelationshipInput[] } {
  const nodes: GraphNodeInput[] = [{ label: 'Namespace', properties: { _key: namespace, name: namespace, source: 'kubernetes' } }];
  const relationships: GraphRelationshipInput[] = [];
  const owners = new Set<string>();
  for (const deployment of deployments) {
    const name = deployment.metadata?.name ?? '';
    const key = keyOf(namespace, name);
    nodes.push({
      label: 'Service',
      properties: {
        _key: key,
        name,
        namespace,
        kind: 'Deployment',
        replicas: deployment.spec?.replicas ?? null,
        ready_replicas: deployment.status?.readyReplicas ?? 0,
        images: (deployment.spec?.template.spec?.containers ?? []).map((c) => c.image ?? ''),
        source: 'kubernetes',
      },
    });
    relationships.push({ type: 'IN_NAMESPACE', from_label: 'Service', from_key: key, to_label: 'Namespace', to_key: namespace });
    const owner = ownerOf(deployment);
    if (owner !== null) {
      if (!owners.has(owner)) nodes.push({ label: 'Owner', properties: { _key: owner, name: owner } });
      owners.add(owner);
      relationships.push({ type: 'OWNS', from_label: 'Owner', from_key: owner, to_label: 'Service', to_key: key });
    }
  }
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    const key = keyOf(namespace, name);
    const statuses = pod.status?.containerStatuses ?? [];
    nodes.push({
      label: 'Pod',
      properties: {
        _key: key,
        name,
        namespace,
        phase: pod.status?.phase ?? null,
        restarts: statuses.reduce((sum, s) => sum + s.restartCount, 0),
        node: pod.spec?.nodeName ?? null,
        source: 'kubernetes',
      },
    });
    relationships.push({ type: 'IN_NAMESPACE', from_label: 'Pod', from_key: key, to_label: 'Namespace', to_key: namespace });
    for (const deployment of deployments.filter((d) => selects(d, pod))) {
      relationships.push({ type: 'MANAGES', from_label: 'Service', from_key: keyOf(namespace, deployment.metadata?.name ?? ''), to_label: 'Pod', to_key: key });
    }
  }
  return { nodes, relationships };
}

export async function syncKubernetes(ctx: SyncContext): Promise<SyncReport> {
  const apis = kubernetesApis(ctx.config, ctx.net);
  const config = ctx.config as unknown as KubernetesConfig;
  const namespaces =
    config.namespaces && config.namespaces.length > 0
      ? [...config.namespaces]
      : (await readAll(apis, ctx.signal, (token) => apis.core.listNamespace({ limit: PAGE, _continue: token }))).map((ns) => ns.metadata?.name ?? '');
  const counts = { namespaces: 0, services: 0, pods: 0, owners: 0 };
  let nodes = 0;
  let relationships = 0;
  for (const [index, namespace] of namespaces.entries()) {
    ctx.progress(index / namespaces.length, `namespace ${namespace}`);
    const deployments = await readAll(apis, ctx.signal, (token) => apis.apps.listNamespacedDeployment({ namespace, limit: PAGE, _continue: token }));
    const pods = await readAll(apis, ctx.signal, (token) => apis.core.listNamespacedPod({ namespace, limit: PAGE, _continue: token }));
    const graph = namespaceGraph(namespace, deployments, pods);
    if (ctx.graph) {
      await ctx.graph.upsertNodes(graph.nodes);
      await ctx.graph.upsertRelationships(graph.relationships);
    }
    nodes += graph.nodes.length;
    relationships += graph.relationships.length;
    counts.namespaces += 1;
    counts.services += deployments.length;
    counts.pods += pods.length;
    counts.owners += graph.nodes.filter((n) => n.label === 'Owner').length;
  }
  ctx.progress(1, 'done');
  return { nodes, relationships, details: counts };
}
