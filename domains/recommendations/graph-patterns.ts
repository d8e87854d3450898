/**
 * Graph patterns: what the context graph of each realm holds suggests a task.
 * Today one pattern the connector syncs produce: cluster workloads (`Pod`,
 * `Service` nodes) -> a weekday-morning cluster health check in that realm.
 * Counts come from the store's per-label stats, one call per realm.
 */
import type { GraphStore } from '../../runtime/graph/store.js';

/** label counts of one realm, for the labels the patterns read */
export interface RealmGraphCounts {
  readonly realm: string;
  readonly labels: Readonly<Record<string, number>>;
}

const CLUSTER_LABELS = ['Pod', 'Service', 'Namespace'] as const;

export async function realmLabelCounts(graph: GraphStore, orgId: string, realms: readonly string[]): Promise<RealmGraphCounts[]> {
  const out: RealmGraphCounts[] = [];
  for (const realm of realms) {
    const stats = await graph.stats({ orgId, realm }, true);
    out.push({ realm, labels: stats.labels ?? {} });
  }
  return out;
}

export interface ClusterPattern {
  readonly realm: string;
  /** counts of Pod, Service, Namespace nodes */
  readonly counts: Readonly<Record<string, number>>;
}

/** Realms whose graph holds cluster workloads. */
export function clusterPatterns(counts: readonly RealmGraphCounts[]): ClusterPattern[] {
  return counts
    .filter(({ labels }) => (labels['Pod'] ?? 0) + (labels['Service'] ?? 0) > 0)
    .map(({ realm, labels }) => ({ realm, counts: Object.fromEntries(CLUSTER_LABELS.map((label) => [label, labels[label] ?? 0])) }));
}
