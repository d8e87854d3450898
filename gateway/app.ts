/**
 * Assembles the service: stores, identity, routes, the routing core and the
 * HTTP listener. `startService` is what `npm start` and the tests both run.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ContextTables } from '../ingest/context-tables.js';
import { sealLegacySigningSecrets, SigningSecrets } from '../ingest/tokens.js';
import { IdentityService } from '../runtime/auth/identity.js';
import { deriveKey } from '../runtime/crypto.js';
import { openCollections } from '../domains/collections.js';
import type { ServiceConfig } from '../runtime/config.js';
import { PolicyBundles } from '../domains/policies/bundles.js';
import { PolicyGate } from '../domains/policies/gate.js';
import { RealmService } from '../domains/realms/service.js';
import { TaskRunService } from '../domains/tasks/run-service.js';
import { TaskRecommender } from '../domains/recommendations/recommend.js';
import { ActivityService } from '../domains/activity/service.js';
import { PolicyService } from '../domains/policies/service.js';
import { PolicySourceService } from '../domains/policies/source-service.js';
import { BindingService } from '../domains/channels/binding-service.js';
import { InboundEndpoints } from '../domains/tasks/inbound-endpoints.js';
import { SkillService } from '../domains/skills/service.js';
import { MemoryService } from '../domains/memory/service.js';
import { RoleService } from '../domains/roles/service.js';
import { UserService } from '../domains/users/service.js';
import { PlatformService } from '../domains/platform/service.js';
import { SettingsService } from '../domains/settings/service.js';
import { ContextQueryService } from '../domains/context-query/service.js';
import { ApiKeyService } from '../domains/api-keys/service.js';
import { WebhookSampleService } from '../domains/webhook-samples/service.js';
import { ArtifactService } from '../domains/artifacts/service.js';
import { AgentService } from '../domains/agents/service.js';
import { TaskDefinitions } from '../domains/tasks/definitions.js';
import { Conversations } from '../domains/chat/conversations.js';
import { ChannelService } from '../domains/channels/channel-service.js';
import { IngestPipelineService } from '../domains/ingest-pipelines/service.js';
import { IngestIntake } from '../domains/ingest-pipelines/intake.js';
import { INGEST_BODY_KIND, QueuedIngest } from '../domains/ingest-pipelines/queued-ingest.js';
import { McpApprovals } from '../domains/sources/mcp-approvals.js';
import { LoginAudit } from '../domains/activity/logins.js';
import { PolicySourceKeys } from '../domains/policies/source-secrets.js';
import { PolicySourceSync } from '../domains/policies/source-sync.js';
import { HealthReporter, registerCoreProbes, registerGraphProbe } from '../runtime/health.js';
import { createOrganizationProvisioner } from '../domains/organizations.js';
import { restrictUmask } from '../runtime/file-modes.js';
import { openMetadataStore } from '../runtime/store/open.js';
import type { MetadataStore } from '../runtime/store/types.js';
import { IdempotencyGuard } from './idempotency.js';
import { Pipeline } from './pipeline.js';
import type { AnyRoute } from './route.js';
import { allRoutes } from './routes/index.js';
import type { Services } from './services.js';
import { listen } from './uws-server.js';
import { builtinPlugins } from '../connectors/builtins.js';
import { closePlugins, loadPlugins } from '../connectors/loader.js';
import { AgentRuntime } from '../runtime/agent/agent-runtime.js';
import { AgentRunLauncher } from '../domains/agents/start-agent-run.js';
import { ChatReplies } from '../domains/chat/chat-replies.js';
import { finalizeInterruptedRuns } from '../runtime/agent/recovery.js';
import { failInterruptedReply } from '../domains/chat/interrupted-reply.js';
import { Supervisor } from '../runtime/supervisor.js';
import { PlatformEvents } from '../runtime/events.js';
import type { GraphStore } from '../runtime/graph/store.js';
import { openGraphStore } from '../runtime/graph/open.js';
import type { SourceDirectory } from '../domains/sources/directory.js';
import { SourceService } from '../domains/sources/source-service.js';
import type { TaskFiring } from '../domains/tasks/firing.js';
import { createTaskRuntime } from '../domains/tasks/index.js';
import { systemClock, type RuntimeClock } from '../runtime/clock.js';
import { ChannelRuntime } from '../domains/channels/channel-runtime.js';
import { WebhookDispatcher } from '../domains/webhooks/dispatcher.js';
import { OutboundWebhooks } from '../domains/webhooks/outbound-webhooks.js';
import { WebhookSecrets } from '../domains/webhooks/secrets.js';
import { FileStore } from '../runtime/files/store.js';
import { PipelineRuns } from '../domains/pipelines/runs.js';
import { PipelineService } from '../domains/pipelines/service.js';
import { PipelineAgentRuns } from '../domains/pipelines/agent-runs.js';
import { createEgressGuard } from '../runtime/net/egress.js';
import type { PortOffers } from '../connectors/contract.js';
import { graphPort } from '../runtime/graph/graph-port.js';
import { EntityGraphFeed } from '../domains/ingest-pipelines/entity-feed.js';
import { MemoryGraph } from '../domains/memory/graph-sync.js';
import { filesPort } from '../runtime/files/files-port.js';
import { memoryPort } from '../domains/memory/memory-port.js';
import { webhooksPort } from '../domains/webhooks/webhooks-port.js';
import { ActivityRecorder } from '../domains/activity/record.js';
import { ActivitySweeper } from '../domains/activity/retention.js';
import { GatewayService } from '../domains/gateways/service.js';
import { GatewayDispatcher } from '../domains/gateways/dispatch.js';
import { GatewayHealthSchedule } from '../domains/gateways/health.js';
import { followSourceSyncs } from '../domains/activity/sources.js';
import { activityRunObserver } from '../domains/activity/runs.js';
import { createRequestAuditor } from './audit.js';
import { WorkflowRunner } from '../domains/orchestrator/runner.js';
import { OrchestratorService } from '../domains/orchestrator/service.js';
import { WorkerService } from '../domains/workers/service.js';
import { WorkerTurnRunner } from '../domains/workers/agent-turns.js';
import { GraphMaintenance } from '../domains/workers/graph-maintenance.js';
import { openJobQueue } from '../runtime/jobs/open.js';
import { ChangeFeed } from '../runtime/feed/change-feed.js';
import { observeGraphChanges } from '../runtime/feed/graph-changes.js';
import { withTaskRunFeed } from '../domains/tasks/run-feed.js';
import { FeedSockets } from './ws-feed.js';
import { openRag } from '../domains/rag/open.js';
import { RagSourceSync } from '../domains/rag/source-sync.js';
import { QueuedIndexing } from '../domains/rag/queued-indexing.js';
import { ragPort } from '../domains/rag/rag-port.js';
import { mediaPort } from '../domains/media/media-port.js';
import type { MediaJobs } from '../domains/media/service.js';
import { openMedia } from '../domains/media/open.js';
import { connectRunWaits } from '../domains/media/run-waits.js';
import { VoiceService } from '../domains/voice/service.js';
import { VoiceSockets } from './voice-sockets.js';

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

/** `clock`: the runtime clock (cron fires, run timeouts); tests inject a simulated one */
export async function startService(config: ServiceConfig, logger: Logger, options: { readonly clock?: RuntimeClock } = {}): Promise<RunningService> {
  // before any store opens: what the engines create under DATA_DIR is the owner's alone
  restrictUmask();
  const clock = options.clock ?? systemClock;
  const store = await openMetadataStore(config);
  let contextTables: ContextTables | null = null;
  let graph: GraphStore | null = null;
  try {
    // the change feed of /ws: graph writes and task run statuses are announced once committed
    const feed = new ChangeFeed(
      { maxEvents: config.wsFeed.retainEvents, maxAgeMs: config.wsFeed.retainSeconds * 1000 },
      logger,
      () => store.committed(),
      clock,
    );
    const collections = withTaskRunFeed(await openCollections(store), feed);
    const ingestSigningSecrets = new SigningSecrets(config.auth.jwtSecret);
    const legacySecrets = await sealLegacySigningSecrets(collections, ingestSigningSecrets);
    if (legacySecrets > 0) logger.info({ tokens: legacySecrets }, 'ingest signing secrets stored in plaintext were sealed');
    const health = new HealthReporter(config);
    registerCoreProbes(health, config, store);
    contextTables = new ContextTables(config, logger);
    await contextTables.open(health);
    const identity = new IdentityService(config, collections, createOrganizationProvisioner(collections), clock);
    // runs a previous process left in flight are finalized before any new one starts
    await finalizeInterruptedRuns(collections, logger, failInterruptedReply(collections.chatMessages));
    const supervisor = new Supervisor({ logger, shutdownGraceMs: config.shutdownGraceSecs * 1000, clock });
    // the activity feed, the audit log and notifications: every domain reports through this one recorder
    const activity = new ActivityRecorder(collections, logger);
    const activitySweeper = new ActivitySweeper(collections, supervisor.clock, config.activityRetentionDays, logger);
    const webhookSecrets = new WebhookSecrets(config.auth.jwtSecret);
    // one guard for every outbound call made for a tenant (webhooks, sources, MCP, tenant LLM URLs)
    const egress = createEgressGuard({ allow: config.egressAllow });
    const webhookDispatcher = new WebhookDispatcher({
      collections,
      supervisor,
      secrets: webhookSecrets,
      logger,
      retryBaseMs: config.webhookRetryBaseMs,
      egress,
      activity,
    });
    const webhooks = new OutboundWebhooks(collections, webhookSecrets, webhookDispatcher);
    graph = observeGraphChanges(await openGraphStore(config), feed);
    registerGraphProbe(health, graph);
    // entity batches a previous process committed to the table but not yet to the graph are replayed before any request
    const entityFeed = new EntityGraphFeed(contextTables.graphLedger, graph, logger);
    await entityFeed
      .replay()
      .catch((error: unknown) => logger.error({ err: error }, 'replaying entity batches into the graph failed; retried at the next start'));
    const files = new FileStore(config.filesDir);
    // feature rag: chunks in DATA_DIR/rag.db (in memory while the feature is off), indexed in the background
    const rag = openRag({ collections, config, egress, files, clock, logger });
    await rag.service.indexer.failInterrupted();
    // one memory service for the routes and the `memory` port: the tools recall (hybrid) and store (auto-embedded) as the routes do
    const memory = new MemoryService(collections, config.features.rag ? rag.autoEmbed : undefined);
    // the media jobs need the job queue, opened after the plugins load: the port reaches them once they exist
    let mediaJobs: MediaJobs | null = null;
    // what connector plugins may reach of the service, each bound to the calling organization
    const ports: PortOffers = {
      media: mediaPort(collections, () => mediaJobs),
      memory: memoryPort(memory),
      files: filesPort(files),
      webhooks: webhooksPort(webhooks),
      ...(graph ? { graph: graphPort(graph) } : {}),
      ...(config.features.rag ? { rag: ragPort(rag.search) } : {}),
    };
    const plugins = await loadPlugins({
      builtins: builtinPlugins({ ports, mcpStdioCommands: config.mcpStdioCommands, kubernetesInCluster: config.kubernetesInCluster }),
      logger,
      net: egress,
      ports,
      ...(config.pluginsFile === null ? {} : { pluginsFile: config.pluginsFile }),
    });
    const events = new PlatformEvents(logger, clock);
    const policyBundles = new PolicyBundles(collections, files);
    const policySourceKeys = new PolicySourceKeys(config.sourceConfigKey ?? config.auth.jwtSecret);
    const policySourceSync = new PolicySourceSync({
      collections,
      bundles: policyBundles,
      keys: policySourceKeys,
      egress,
      dataDir: config.dataDir,
      allowLocal: config.policyGitAllowLocal,
      logger,
    });
    const policies = new PolicyGate(config.features.policies, policyBundles, collections, logger, () => clock.now(), activity);
    const agentRuntime = new AgentRuntime({
      supervisor,
      collections,
      plugins,
      logger,
      prices: config.llmPrices,
      events,
      policies,
      observer: activityRunObserver(activity),
      parkAfterMs: config.agentParkAfterMs,
    });
    await agentRuntime.restoreParked();
    followSourceSyncs(activity, events);
    const sourceService = new SourceService({
      collections,
      plugins,
      keyRoot: config.sourceConfigKey ?? config.auth.jwtSecret,
      events,
      graph: () => graph,
      logger,
      egress,
      clock,
    });
    await sourceService.start();
    const sources: SourceDirectory = sourceService;
    const launcher = new AgentRunLauncher({ collections, config, agentRuntime, sources, egress, clock });
    const gateways = new GatewayService(collections, config.auth.jwtSecret, egress, clock);
    // callback URLs: PUBLIC_URL, else the address this process listens on (known once it listens)
    let listeningBase = '';
    const gatewayDispatcher = new GatewayDispatcher(collections, gateways, () => config.publicUrl ?? listeningBase);
    const gatewayHealth = new GatewayHealthSchedule(collections, gateways, config.gatewayHealthIntervalSecs, logger);
    const taskRuntime = createTaskRuntime({ config, collections, supervisor, launcher, events, logger, activity, gateways: gatewayDispatcher });
    await taskRuntime.start();
    const tasks: TaskFiring = taskRuntime.service;
    const channels = new ChannelRuntime({ collections, supervisor, agentRuntime, launcher, config, logger, egress });
    await channels.start();
    const pipelineRuns = new PipelineRuns(collections, identity, clock);
    // workflow runs a previous process left in flight resume (their interrupted agent runs were finalized above)
    const workflowRunner = new WorkflowRunner({ collections, supervisor, launcher, logger });
    workflowRunner.useGatewayDispatch(gatewayDispatcher);
    await workflowRunner.start();
    // the gateway owns the job queue; workers reach it only over the worker routes (nothing is queued while the feature is off)
    const jobQueue = await openJobQueue({ ...config, natsUrl: config.features.workers ? config.natsUrl : null }, clock, logger);
    const workers = new WorkerService(jobQueue, clock, config.workerLeaseTtlSeconds * 1000);
    // with the feature on, model turns of task and binding runs go to the `agent` queue (domains/workers/agent-turns.ts)
    const workerTurns = new WorkerTurnRunner(workers, agentRuntime.handedTurns, logger);
    if (config.features.workers) agentRuntime.useTurnRunner(workerTurns);
    // media-generation jobs: polled on the `render` queue (by worker processes with feature workers); unfinished ones carry on
    const mediaDeps = { collections, queue: jobQueue, clock, logger, plugins, sources, files, net: egress, config };
    const { jobs: openedJobs, poller: mediaPoller } = await openMedia({ ...mediaDeps, feedOf: (runId) => agentRuntime.progressFeed(runId) });
    mediaJobs = openedJobs;
    const realms = new RealmService(collections);
    const autoEmbed = config.features.rag ? rag.autoEmbed : undefined;
    const ingestIntake = new IngestIntake(collections, contextTables, ingestSigningSecrets, events, logger, entityFeed, autoEmbed);
    const tables = contextTables;
    // large ingest bodies go to workers on the `ingest` queue; runs a previous process left pending are matched with their jobs
    const queuedIngestDeps = { workers, writer: () => tables.writer, intake: ingestIntake, maxJsonDepth: config.maxJsonDepth, clock, logger };
    const spoolDir = join(config.dataDir, 'ingest-queue');
    const queuedIngest = new QueuedIngest({ ...queuedIngestDeps, spoolDir, minBytes: config.features.workers ? config.ingestWorkerMinBytes : null });
    workers.onComplete(INGEST_BODY_KIND, queuedIngest.onComplete);
    await queuedIngest.reconcile();
    // feature voice: live sessions are actors; records a previous process left live are ended as interrupted
    const voice = new VoiceService({ collections, config, supervisor, egress, files, plugins, sources, realms, clock, logger, policies, activity });
    await voice.recover();
    const services: Services = {
      mediaJobs,
      mediaPoller,
      rag: rag.service,
      ragSearch: rag.search,
      ragSources: new RagSourceSync(rag.service, sourceService),
      ragQueuedIndexing: QueuedIndexing.open(rag.service, workers, config.features.workers && config.features.rag, logger),
      workers,
      workerTurns,
      graphMaintenance: new GraphMaintenance({ workers, graph: () => graph, requireRealm: (orgId, realm) => realms.get(orgId, realm), clock }),
      channels,
      config,
      collections,
      identity,
      health,
      logger,
      contextTables,
      supervisor,
      agentRuntime,
      events,
      graph,
      sources,
      tasks,
      launcher,
      chatReplies: new ChatReplies(collections, launcher),
      clock,
      webhooks,
      sourceService,
      taskRuntime,
      files,
      pipelineRuns,
      pipelines: new PipelineService(collections, pipelineRuns),
      pipelineAgent: new PipelineAgentRuns({ collections, runs: pipelineRuns, launcher, agentRuntime, logger, clock }),
      egress,
      policyBundles,
      policies,
      realms,
      skills: new SkillService(collections),
      memory,
      roles: new RoleService(collections, clock),
      users: new UserService(collections),
      platform: new PlatformService(collections, config.platformOperators, clock),
      settings: new SettingsService(collections, config.auth.jwtSecret, egress),
      apiKeys: new ApiKeyService(collections, clock),
      webhookSamples: new WebhookSampleService(collections, tasks),
      artifacts: new ArtifactService(collections, files),
      agents: new AgentService(collections.agents),
      recommender: new TaskRecommender(collections, graph),
      taskRunService: new TaskRunService(collections, agentRuntime, files),
      policySourceSync,
      policySourceKeys,
      activity,
      activitySweeper,
      activityService: new ActivityService(collections),
      policyService: new PolicyService(collections, policyBundles, clock),
      bindings: new BindingService(collections, channels, supervisor),
      inboundEndpoints: new InboundEndpoints(collections, taskRuntime),
      workflowRunner,
      orchestrator: new OrchestratorService(collections, workflowRunner, clock, agentRuntime),
      taskDefinitions: new TaskDefinitions(collections, taskRuntime, config.production),
      conversations: new Conversations(collections, agentRuntime, launcher),
      channelService: new ChannelService(collections, channels),
      ingestPipelines: new IngestPipelineService(collections, contextTables, ingestSigningSecrets),
      ingestIntake,
      memoryGraph: new MemoryGraph(collections, graph),
      mcpApprovals: new McpApprovals(collections, () => clock.now()),
      loginAudit: new LoginAudit(activity, collections),
      contextQuery: new ContextQueryService(collections, contextTables),
      policySourceService: new PolicySourceService({
        collections,
        bundles: policyBundles,
        sync: policySourceSync,
        keys: policySourceKeys,
        egress,
        allowLocal: config.policyGitAllowLocal,
      }),
      gateways,
      gatewayDispatcher,
      gatewayHealth,
      queuedIngest,
      voice,
    };

    const routes: AnyRoute[] = allRoutes(services, () => routes);
    const pipeline = new Pipeline({
      routes,
      authenticator: identity,
      idempotency: new IdempotencyGuard(collections.idempotency, deriveKey(config.auth.jwtSecret, 'idempotency-responses')),
      cursorKey: deriveKey(config.auth.jwtSecret, 'pagination-cursors'),
      features: config.features,
      logger,
      maxJsonDepth: config.maxJsonDepth,
      audit: createRequestAuditor(activity),
      workerToken: config.workerToken,
    });
    // outbound deliveries a previous process left queued or in flight carry on
    await webhookDispatcher.resume();
    // media tool calls of runs that can park hand their result over; runs parked on jobs that ended meanwhile come back (every resumer is registered)
    connectRunWaits(mediaJobs, agentRuntime.deferredCalls, logger);
    activitySweeper.start();
    const feedSockets = new FeedSockets({
      feed,
      authenticate: (authorization) => identity.authenticate(authorization),
      realmNames: async (orgId, realm) => {
        const doc = await services.realms.get(orgId, realm);
        return [doc.id, doc.name];
      },
      taskExists: async (orgId, taskId) => void (await services.taskDefinitions.get(orgId, taskId)),
      config: config.wsFeed,
      logger,
    });
    const voiceSockets = new VoiceSockets({ voice, enabled: config.features.voice, logger });
    const sockets = {
      install: (app: Parameters<typeof feedSockets.install>[0]) => {
        feedSockets.install(app);
        voiceSockets.install(app);
      },
      closeAll: () => {
        feedSockets.closeAll();
        voiceSockets.closeAll();
      },
    };
    const server = await listen(pipeline, config.host, config.port, () => store.committed(), sockets);
    listeningBase = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}`;
    gatewayHealth.start();
    // the KQL parser's first analysis takes seconds: paid here, after the listener is up, when KQL is in use
    services.contextQuery
      .warmIfUsed()
      .then((ms) => ms !== null && logger.info({ ms: Math.round(ms) }, 'KQL parser warmed'))
      .catch((error: unknown) => logger.warn({ err: error }, 'KQL parser warm-up failed'));
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
          await sourceService.stop();
          await activitySweeper.stop();
          await Promise.all([gatewayHealth.stop(), gatewayDispatcher.stop()]);
          await taskRuntime.stop();
          // runs waiting on media jobs park (or, waiting in a tool, answer at once); the jobs are followed again after the restart
          await agentRuntime.parkForShutdown();
          mediaJobs?.release();
          await supervisor.shutdown();
          await mediaPoller.stop();
          await workers.queue.close();
          await closePlugins(plugins);
          await server.close();
          await rag.close();
          await contextTables?.close();
          await graph?.close();
          await store.close();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await contextTables?.close();
    await graph?.close();
    await store.close();
    throw error;
  }
}
