/** Compact, JSON-plain views of Kubernetes objects: what the model needs, not every field. */
import type { CoreV1Event, V1Deployment, V1Namespace, V1Pod } from '@kubernetes/client-node';

const iso = (value: Date | string | undefined): string | null => (value === undefined ? null : value instanceof Date ? value.toISOString() : value);

export function namespaceView(ns: V1Namespace): Record<string, unknown> {
  return {
    name: ns.metadata?.name ?? '',
    phase: ns.status?.phase ?? null,
    created_at: iso(ns.metadata?.creationTimestamp),
    labels: ns.metadata?.labels ?? {},
  };
}

export function podView(pod: V1Pod): Record<string, unknown> {
  const statuses = pod.status?.containerStatuses ?? [];
  const owner = pod.metadata?.ownerReferences?.[0];
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? '',
    phase: pod.status?.phase ?? null,
    ready: `${statuses.filter((s) => s.ready).length}/${pod.spec?.containers.length ?? statuses.length}`,
    restarts: statuses.reduce((sum, s) => sum + s.restartCount, 0),
    node: pod.spec?.nodeName ?? null,
    ip: pod.status?.podIP ?? null,
    started_at: iso(pod.status?.startTime),
    owner: owner ? { kind: owner.kind, name: owner.name } : null,
    labels: pod.metadata?.labels ?? {},
    containers: statuses.map((s) => ({
      name: s.name,
      image: s.image,
      ready: s.ready,
      restart_count: s.restartCount,
      state: s.state?.running ? 'running' : s.state?.waiting ? 'waiting' : s.state?.terminated ? 'terminated' : 'unknown',
      reason: s.state?.waiting?.reason ?? s.state?.terminated?.reason ?? null,
      last_termination_reason: s.lastState?.terminated?.reason ?? null,
    })),
  };
}

export function eventView(event: CoreV1Event): Record<string, unknown> {
  return {
    type: event.type ?? null,
    reason: event.reason ?? null,
    message: event.message ?? null,
    object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
    namespace: event.metadata.namespace ?? event.involvedObject.namespace ?? null,
    count: event.count ?? 1,
    first_seen: iso(event.firstTimestamp ?? event.eventTime),
    last_seen: iso(event.lastTimestamp ?? event.eventTime),
  };
}

export function deploymentView(deployment: V1Deployment): Record<string, unknown> {
  const spec = deployment.spec;
  return {
    name: deployment.metadata?.name ?? '',
    namespace: deployment.metadata?.namespace ?? '',
    labels: deployment.metadata?.labels ?? {},
    annotations: deployment.metadata?.annotations ?? {},
    replicas: spec?.replicas ?? null,
    strategy: spec?.strategy?.type ?? null,
    selector: spec?.selector.matchLabels ?? {},
    containers: (spec?.template.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image ?? null })),
    restarted_at: spec?.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt'] ?? null,
    status: {
      replicas: deployment.status?.replicas ?? 0,
      ready_replicas: deployment.status?.readyReplicas ?? 0,
      updated_replicas: deployment.status?.updatedReplicas ?? 0,
      available_replicas: deployment.status?.availableReplicas ?? 0,
      conditions: (deployment.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? null, message: c.message ?? null })),
    },
  };
}

/** A list page: the items and the `continue` token of the next page (null on the last). */
export function pageOf(items: unknown[], continueToken: string | undefined): { items: unknown[]; next_continue: string | null } {
  return { items, next_continue: continueToken !== undefined && continueToken !== '' ? continueToken : null };
}
