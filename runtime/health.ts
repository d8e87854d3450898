/**
 * Health of every dependency, as the plain status strings `/health` reports.
 * Stores register a probe when they open; a dependency without a probe is
 * reported as `unavailable` (not built or not started in this process).
 */
import type { FeatureFlags, ServiceConfig } from './config.js';
import { probeNats } from './bus-probe.js';
import type { MetadataStore } from './store/types.js';
import type { GraphStore } from './graph/store.js';

export type DependencyName = 'metadata' | 'graph' | 'context_tables' | 'bus' | 'cache' | 'llm';
/** `none`: the concern is not served by any engine in this deployment (nothing is cached across processes) */
export type DependencyStatus = 'ok' | 'down' | 'unavailable' | 'unconfigured' | 'configured' | 'none';

interface Probe {
  readonly engine: string;
  check(): Promise<DependencyStatus>;
}

export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'down';
  readonly features: FeatureFlags;
  readonly dependencies: Record<DependencyName, DependencyStatus>;
  readonly engines: Partial<Record<DependencyName, string>>;
}

const PROBE_TIMEOUT_MS = 2000;

export class HealthReporter {
  private readonly probes = new Map<DependencyName, Probe>();

  constructor(private readonly config: ServiceConfig) {}

  register(name: DependencyName, probe: Probe): void {
    this.probes.set(name, probe);
  }

  async report(): Promise<HealthReport> {
    const names: DependencyName[] = ['metadata', 'graph', 'context_tables', 'bus', 'cache', 'llm'];
    const statuses = await Promise.all(names.map((name) => this.check(name)));
    const dependencies = Object.fromEntries(names.map((name, index) => [name, statuses[index]])) as Record<DependencyName, DependencyStatus>;
    const engines: Partial<Record<DependencyName, string>> = {};
    for (const [name, probe] of this.probes) engines[name] = probe.engine;
    return {
      status: dependencies.metadata !== 'ok' ? 'down' : Object.values(dependencies).includes('down') ? 'degraded' : 'ok',
      features: this.config.features,
      dependencies,
      engines,
    };
  }

  private async check(name: DependencyName): Promise<DependencyStatus> {
    const probe = this.probes.get(name);
    if (!probe) return 'unavailable';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<DependencyStatus>((resolve) => {
      timer = setTimeout(() => resolve('down'), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([probe.check().catch((): DependencyStatus => 'down'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The probes this foundation owns: metadata store, message bus, LLM configuration. */
export function registerCoreProbes(health: HealthReporter, config: ServiceConfig, store: MetadataStore): void {
  health.register('metadata', {
    engine: store.engine,
    check: async () => {
      await store.ping();
      return 'ok';
    },
  });
  const natsUrl = config.natsUrl;
  health.register('bus', natsUrl ? { engine: 'nats', check: () => probeNats(natsUrl) } : { engine: 'in-process', check: async () => 'ok' });
  // every cache (auth contexts, graph key sets, catalogs) lives in this process; none is shared across processes
  health.register('cache', { engine: 'in-process', check: async () => 'none' });
  // the operator's endpoint only: organizations with their own llm_base_url and key do not change it
  health.register('llm', {
    engine: config.llmBaseUrl === null ? 'provider-api' : 'llm-base-url',
    check: async () => (config.llmApiKey ? 'configured' : 'unconfigured'),
  });
}

/** The context graph: `ok` while its engine answers. */
export function registerGraphProbe(health: HealthReporter, graph: GraphStore): void {
  health.register('graph', {
    engine: graph.engine,
    check: async () => {
      await graph.ping();
      return 'ok';
    },
  });
}
