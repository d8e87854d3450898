/**
 * Assembles the service: stores, identity, routes, the routing core and the
 * HTTP listener. `startService` is what `npm start` and the tests both run.
 */
import type { Logger } from 'pino';
import { ContextTables } from '../ingest/context-tables.js';
import { IdentityService } from '../runtime/auth/identity.js';
import { deriveKey } from '../runtime/crypto.js';
import { openCollections } from '../runtime/collections.js';
import type { ServiceConfig } from '../runtime/config.js';
import { HealthReporter, registerCoreProbes } from '../runtime/health.js';
import { createOrganizationProvisioner } from '../runtime/organizations.js';
import { openMetadataStore } from '../runtime/store/open.js';
import type { MetadataStore } from '../runtime/store/types.js';
import { IdempotencyGuard } from './idempotency.js';
import { Pipeline } from './pipeline.js';
import type { AnyRoute } from './route.js';
import { allRoutes } from './routes/index.js';
import type { Services } from './services.js';
import { listen } from './uws-server.js';
import { builtinPlugins } from '../connectors/builtins.js';
import { loadPlugins } from '../connectors/loader.js';
import { AgentRuntime } from '../runtime/agent/agent-runtime.js';
import { finalizeInterruptedRuns } from '../runtime/agent/recovery.js';
import { Supervisor } from '../runtime/supervisor.js';
import { PlatformEvents } from '../runtime/events.js';
import { ServiceError } from '../runtime/errors.js';
import type { GraphStore } from '../runtime/graph/store.js';
import { NO_SOURCES, type SourceDirectory } from '../runtime/sources/directory.js';
import type { TaskFiring } from '../runtime/tasks/firing.js';

export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly services: Services;
  readonly metadataStore: MetadataStore;
  /** the route table, as served and as documented in /openapi.json */
  readonly routes: readonly AnyRoute[];
  /** stops accepting, lets in-flight requests finish, closes the stores */
  stop(): Promise<void>;
}

export async function startService(config: ServiceConfig, logger: Logger): Promise<RunningService> {
  const store = await openMetadataStore(config);
  let contextTables: ContextTables | null = null;
  try {
    const collections = await openCollections(store);
    const health = new HealthReporter(config);
    registerCoreProbes(health, config, store);
    contextTables = new ContextTables(config, logger);
    await contextTables.open(health);
    const identity = new IdentityService(config, collections, createOrganizationProvisioner(collections));
    // runs a previous process left in flight are finalized before any new one starts
    await finalizeInterruptedRuns(collections, logger);
    const supervisor = new Supervisor({ logger, shutdownGraceMs: config.shutdownGraceSecs * 1000 });
    const plugins = await loadPlugins({ builtins: builtinPlugins({ collections }) });
    const agentRuntime = new AgentRuntime({ supervisor, collections, plugins, logger, prices: config.llmPrices });
    const events = new PlatformEvents(logger);
    const graph: GraphStore | null = null;
    const sources: SourceDirectory = NO_SOURCES;
    const tasks: TaskFiring = {
      fire: (_org, taskId) => Promise.reject(new ServiceError('not_found', `task ${taskId} not found`)),
    };
    const services: Services = {
      config, collections, identity, health, logger, contextTables, supervisor, agentRuntime, events, graph, sources, tasks,
    };

    const routes: AnyRoute[] = allRoutes(services, () => routes);
    const pipeline = new Pipeline({
      routes,
      authenticator: identity,
      idempotency: new IdempotencyGuard(collections.idempotency, deriveKey(config.auth.jwtSecret, 'idempotency-responses')),
      features: config.features,
      logger,
    });
    const server = await listen(pipeline, config.host, config.port);
    let stopping: Promise<void> | null = null;
    return {
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}/api/v1`,
      port: server.port,
      services,
      metadataStore: store,
      routes,
      stop: () => {
        stopping ??= (async () => {
          // runs reach a safe point (and their SSE streams end) before the HTTP drain waits on them
          await supervisor.shutdown();
          await server.close();
          await contextTables?.close();
          await store.close();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await contextTables?.close();
    await store.close();
    throw error;
  }
}
