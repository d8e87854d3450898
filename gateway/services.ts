import type { Logger } from 'pino';
import type { ContextTables } from '../ingest/context-tables.js';
import type { IdentityService } from '../runtime/auth/identity.js';
import type { Collections } from '../domains/collections.js';
import type { ServiceConfig } from '../runtime/config.js';
import type { HealthReporter } from '../runtime/health.js';
import type { AgentRuntime } from '../runtime/agent/agent-runtime.js';
import type { AgentRunLauncher } from '../domains/agents/start-agent-run.js';
import type { ChatReplies } from '../domains/chat/chat-replies.js';
import type { RuntimeClock } from '../runtime/clock.js';
import type { Supervisor } from '../runtime/supervisor.js';
import type { PlatformEvents } from '../runtime/events.js';
import type { GraphStore } from '../runtime/graph/store.js';
import type { SourceDirectory } from '../domains/sources/directory.js';
import type { SourceService } from '../domains/sources/source-service.js';
import type { TaskFiring } from '../domains/tasks/firing.js';
import type { TaskRuntime } from '../domains/tasks/index.js';
import type { ChannelRuntime } from '../domains/channels/channel-runtime.js';
import type { OutboundWebhooks } from '../domains/webhooks/outbound-webhooks.js';
import type { FileStore } from '../runtime/files/store.js';
import type { PipelineRuns } from '../domains/pipelines/runs.js';
import type { PipelineService } from '../domains/pipelines/service.js';
import type { PipelineAgentRuns } from '../domains/pipelines/agent-runs.js';
import type { EgressGuard } from '../runtime/net/egress.js';
import type { PolicyBundles } from '../domains/policies/bundles.js';
import type { PolicyGate } from '../domains/policies/gate.js';
import type { RealmService } from '../domains/realms/service.js';
import type { SkillService } from '../domains/skills/service.js';
import type { MemoryService } from '../domains/memory/service.js';
import type { RoleService } from '../domains/roles/service.js';
import type { UserService } from '../domains/users/service.js';
import type { PlatformService } from '../domains/platform/service.js';
import type { SettingsService } from '../domains/settings/service.js';
import type { ApiKeyService } from '../domains/api-keys/service.js';
import type { WebhookSampleService } from '../domains/webhook-samples/service.js';
import type { ArtifactService } from '../domains/artifacts/service.js';
import type { AgentService } from '../domains/agents/service.js';
import type { PolicySourceKeys } from '../domains/policies/source-secrets.js';
import type { PolicySourceSync } from '../domains/policies/source-sync.js';
import type { ActivityRecorder } from '../domains/activity/record.js';
import type { ActivitySweeper } from '../domains/activity/retention.js';
import type { ActivityService } from '../domains/activity/service.js';
import type { PolicyService } from '../domains/policies/service.js';
import type { PolicySourceService } from '../domains/policies/source-service.js';
import type { BindingService } from '../domains/channels/binding-service.js';
import type { TaskRunService } from '../domains/tasks/run-service.js';
import type { TaskRecommender } from '../domains/recommendations/recommend.js';
import type { InboundEndpoints } from '../domains/tasks/inbound-endpoints.js';
import type { GatewayService } from '../domains/gateways/service.js';
import type { GatewayDispatcher } from '../domains/gateways/dispatch.js';
import type { GatewayHealthSchedule } from '../domains/gateways/health.js';
import type { OrchestratorService } from '../domains/orchestrator/service.js';
import type { WorkflowRunner } from '../domains/orchestrator/runner.js';
import type { WorkerService } from '../domains/workers/service.js';
import type { WorkerTurnRunner } from '../domains/workers/agent-turns.js';
import type { GraphMaintenance } from '../domains/workers/graph-maintenance.js';
import type { TaskDefinitions } from '../domains/tasks/definitions.js';
import type { Conversations } from '../domains/chat/conversations.js';
import type { ChannelService } from '../domains/channels/channel-service.js';
import type { IngestPipelineService } from '../domains/ingest-pipelines/service.js';
import type { IngestIntake } from '../domains/ingest-pipelines/intake.js';
import type { QueuedIngest } from '../domains/ingest-pipelines/queued-ingest.js';
import type { McpApprovals } from '../domains/sources/mcp-approvals.js';
import type { LoginAudit } from '../domains/activity/logins.js';
import type { MemoryGraph } from '../domains/memory/graph-sync.js';
import type { RagService } from '../domains/rag/service.js';
import type { RagSearch } from '../domains/rag/search.js';
import type { RagSourceSync } from '../domains/rag/source-sync.js';
import type { QueuedIndexing } from '../domains/rag/queued-indexing.js';
import type { MediaJobs } from '../domains/media/service.js';
import type { MediaPoller } from '../domains/media/poller.js';
import type { ContextQueryService } from '../domains/context-query/service.js';
import type { VoiceService } from '../domains/voice/service.js';

/** What route modules are built from; assembled once in gateway/app.ts. */
export interface Services {
  readonly config: ServiceConfig;
  readonly collections: Collections;
  readonly identity: IdentityService;
  readonly health: HealthReporter;
  readonly logger: Logger;
  /** DuckDB context tables: ingest, runs, reads */
  readonly contextTables: ContextTables;
  /** KQL over context tables (Advanced tier) */
  readonly contextQuery: ContextQueryService;
  /** supervises every actor (agent runs, later tasks, bindings, workers) */
  readonly supervisor: Supervisor;
  /** starts agent runs, follows their transcripts, answers approvals */
  readonly agentRuntime: AgentRuntime;
  /** builds and starts an agent run for chat, tasks and bindings; cancels runs in flight (also during launch) */
  readonly launcher: AgentRunLauncher;
  /** chat messages and the replies their runs write */
  readonly chatReplies: ChatReplies;
  /** the runtime clock: every time read of the routes goes through it */
  readonly clock: RuntimeClock;
  /** platform events (source synced, run failed, ingest failed ...) that lifecycle tasks listen to */
  readonly events: PlatformEvents;
  /** the context graph (null until a graph store is wired) */
  readonly graph: GraphStore | null;
  /** the sources runs may see, configs decrypted */
  readonly sources: SourceDirectory;
  /** the /sources resource: CRUD, validation, sync jobs and schedule (also the `sources` directory) */
  readonly sourceService: SourceService;
  /** fires tasks from samples, replays and manual runs */
  readonly tasks: TaskFiring;
  /** task actors, runs, the /hooks intake and its deliveries */
  readonly taskRuntime: TaskRuntime;
  /** chat channels: binding actors, inbound Slack events and interactivity, Socket Mode */
  readonly channels: ChannelRuntime;
  /** outbound webhooks: CRUD helpers, rotation, the delivery queue */
  readonly webhooks: OutboundWebhooks;
  /** files and artifacts: one folder per organization under FILES_DIR */
  readonly files: FileStore;
  /** pipeline runs: start (with a pipeline-scoped token), reports, finish */
  readonly pipelineRuns: PipelineRuns;
  /** pipeline definitions and their versions (revert, optimistic concurrency) */
  readonly pipelines: PipelineService;
  /** agent runs inside pipeline runs (/pipeline-agent/runs) */
  readonly pipelineAgent: PipelineAgentRuns;
  /** the egress guard: every outbound call made for a tenant (webhooks, sources, MCP, tenant LLM URLs) */
  readonly egress: EgressGuard;
  /** the organizations' compiled policy bundles (feature `policies`) */
  readonly policyBundles: PolicyBundles;
  /** policy enforcement on tool calls; `enabled` is the feature flag */
  readonly policies: PolicyGate;
  /** realms: namespaces for graph, sources and memory */
  readonly realms: RealmService;
  /** skills and their approval workflow */
  readonly skills: SkillService;
  /** memory entries and their recall */
  readonly memory: MemoryService;
  /** built-in and custom roles */
  readonly roles: RoleService;
  /** the members of the organization */
  readonly users: UserService;
  /** a user's organizations, invites, and the operators' view of every user */
  readonly platform: PlatformService;
  /** organization settings and name; the organization's own LLM key, sealed */
  readonly settings: SettingsService;
  /** API keys: issue, re-scope, rotate, revoke */
  readonly apiKeys: ApiKeyService;
  /** built-in and saved webhook samples, fired into tasks */
  readonly webhookSamples: WebhookSampleService;
  /** the files agent runs wrote, with their runs */
  readonly artifacts: ArtifactService;
  /** configured agents (the `default` one cannot be deleted or renamed) */
  readonly agents: AgentService;
  /** suggested tasks from recurring chat questions, connector state and graph patterns */
  readonly recommender: TaskRecommender;
  /** a task's runs: one run, its events and artifacts, approval answers */
  readonly taskRunService: TaskRunService;
  /** git policy sources: fetch, compile, one sync per source at a time */
  readonly policySourceSync: PolicySourceSync;
  /** seals policy sources' ssh keys */
  readonly policySourceKeys: PolicySourceKeys;
  /** the activity feed, the audit log and notifications */
  readonly activity: ActivityRecorder;
  /** deletes feed, audit and notification entries past ACTIVITY_RETENTION_DAYS, hourly */
  readonly activitySweeper: ActivitySweeper;
  /** what /activity, /activity/audit-log and /notifications read and change */
  readonly activityService: ActivityService;
  /** /policies: Rego policies (compiled at save), evaluation, simulation and policy tests */
  readonly policyService: PolicyService;
  /** /policies/sources: git and inline policy sources */
  readonly policySourceService: PolicySourceService;
  /** /bindings: which agent answers which channel messages (their actors start, change and stop with them) */
  readonly bindings: BindingService;
  /** /inbound-webhooks: provisioned inbound endpoints, and the stored inbound deliveries */
  readonly inboundEndpoints: InboundEndpoints;
  /** /gateways: external orchestration engines (api keys sealed), their probe and dispatch log */
  readonly gateways: GatewayService;
  /** the dispatch port (workflow steps, tasks): runs work on a gateway's engine and waits for its outcome */
  readonly gatewayDispatcher: GatewayDispatcher;
  /** probes every gateway every GATEWAY_HEALTH_INTERVAL_SECS */
  readonly gatewayHealth: GatewayHealthSchedule;
  /** /orchestrator (feature `orchestrator`): workflows and their runs */
  readonly orchestrator: OrchestratorService;
  /** the workflow run actors; `useGatewayDispatch` wires the external orchestration engine's port */
  readonly workflowRunner: WorkflowRunner;
  /** worker processes, the job queue they reach over HTTP, and what completed jobs apply */
  readonly workers: WorkerService;
  /** model turns of task and binding runs on workers (used only while feature `workers` is on) */
  readonly workerTurns: WorkerTurnRunner;
  /** index rebuilds through the `graph-maintenance` queue (feature `workers`) */
  readonly graphMaintenance: GraphMaintenance;
  /** /tasks: task definitions (CRUD, secret rotation, inbound deliveries); their actors and runs are `taskRuntime` */
  readonly taskDefinitions: TaskDefinitions;
  /** /chat/conversations: conversations, history, reconnects, cancel, approvals, tool calls */
  readonly conversations: Conversations;
  /** /channels: chat channels, their connection and reload */
  readonly channelService: ChannelService;
  /** /context/pipelines: ingest pipelines, their tokens and runs */
  readonly ingestPipelines: IngestPipelineService;
  /** POST /context/ingest/webhook/:token: token, signature, write, the lifecycle event */
  readonly ingestIntake: IngestIntake;
  /** writes asked for through /mcp and their decisions */
  readonly mcpApprovals: McpApprovals;
  /** logins, registrations and failed logins in the audit log */
  readonly loginAudit: LoginAudit;
  /** POST /memory/sync: memory entries as graph nodes linked to the entities they name; recall's expand */
  readonly memoryGraph: MemoryGraph;
  /** /rag (feature `rag`): collections, documents and their background indexing */
  readonly rag: RagService;
  /** POST /rag/search and the `rag.search` tool: hybrid retrieval */
  readonly ragSearch: RagSearch;
  /** POST /rag/collections/:id/sync: a collection fed by a connector source */
  readonly ragSources: RagSourceSync;
  /** POST /workers/jobs/:job_id/rag-index: documents indexed through the worker queue (features rag and workers) */
  readonly ragQueuedIndexing: QueuedIndexing;
  /** /media/jobs and the `media` port: durable media-generation jobs */
  readonly mediaJobs: MediaJobs;
  /** follows media jobs on the `render` queue; cancels their platform tasks */
  readonly mediaPoller: MediaPoller;
  /** large ingest bodies on the `ingest` queue (feature `workers`): spool, pending run, the worker's rows written behind its fence */
  readonly queuedIngest: QueuedIngest;
  /** /voice (feature `voice`): voice session records, client tokens, live sessions */
  readonly voice: VoiceService;
}
