/**
 * Every metadata collection: the platform's (runtime/collections.ts) and each
 * domain's, with its spec (unique sets, indexes, text fields). Opened once at
 * start; creation is idempotent.
 */
import { openPlatformCollections, type PlatformCollections } from '../runtime/collections.js';
import type { MetadataStore, OrgCollection } from '../runtime/store/types.js';
import type { ActivityDoc, AuditEntryDoc, NotificationDoc } from './activity/types.js';
import type { AgentDoc } from './agents/documents.js';
import type { BindingDoc, ChannelDoc, ChannelEventDoc } from './channels/documents.js';
import type { ChatMessageDoc, ConversationDoc } from './chat/documents.js';
import type { MemoryDoc } from './memory/documents.js';
import type { PipelineAgentRunDoc, PipelineDoc, PipelineRunDoc, PipelineRunEntryDoc, PipelineVersionDoc } from './pipelines/documents.js';
import type { PolicyDecisionDoc, PolicyDoc } from './policies/documents.js';
import type { PolicySourceDoc } from './policies/types.js';
import type { RealmDoc } from './realms/documents.js';
import type { SettingsDoc } from './settings/documents.js';
import type { SkillDoc } from './skills/documents.js';
import type { McpApprovalDoc, SourceDoc, SourceSyncJobDoc } from './sources/types.js';
import type { InboundDeliveryDoc, TaskDoc, TaskRunDoc } from './tasks/types.js';
import type { WorkflowDoc, WorkflowRunDoc } from './orchestrator/documents.js';
import type { WebhookSampleDoc } from './webhook-samples/documents.js';
import type { OutboundWebhookDoc, WebhookDeliveryDoc } from './webhooks/documents.js';
import type { GatewayDispatchDoc, GatewayDoc } from './gateways/documents.js';
import type { RagCollectionDoc, RagDocumentDoc } from './rag/documents.js';
import type { MediaJobDoc } from './media/documents.js';
import type { VoiceSessionDoc } from './voice/documents.js';

export interface Collections extends PlatformCollections {
  readonly realms: OrgCollection<RealmDoc>;
  readonly settings: OrgCollection<SettingsDoc>;
  readonly agents: OrgCollection<AgentDoc>;
  readonly skills: OrgCollection<SkillDoc>;
  readonly memory: OrgCollection<MemoryDoc>;
  readonly conversations: OrgCollection<ConversationDoc>;
  readonly chatMessages: OrgCollection<ChatMessageDoc>;
  readonly channels: OrgCollection<ChannelDoc>;
  readonly bindings: OrgCollection<BindingDoc>;
  readonly channelEvents: OrgCollection<ChannelEventDoc>;
  readonly pipelines: OrgCollection<PipelineDoc>;
  readonly pipelineRuns: OrgCollection<PipelineRunDoc>;
  readonly pipelineRunEntries: OrgCollection<PipelineRunEntryDoc>;
  readonly pipelineVersions: OrgCollection<PipelineVersionDoc>;
  readonly pipelineAgentRuns: OrgCollection<PipelineAgentRunDoc>;
  readonly sources: OrgCollection<SourceDoc>;
  readonly sourceSyncJobs: OrgCollection<SourceSyncJobDoc>;
  readonly mcpApprovals: OrgCollection<McpApprovalDoc>;
  readonly outboundWebhooks: OrgCollection<OutboundWebhookDoc>;
  readonly webhookDeliveries: OrgCollection<WebhookDeliveryDoc>;
  readonly webhookSamples: OrgCollection<WebhookSampleDoc>;
  readonly tasks: OrgCollection<TaskDoc>;
  readonly taskRuns: OrgCollection<TaskRunDoc>;
  readonly inboundDeliveries: OrgCollection<InboundDeliveryDoc>;
  readonly policies: OrgCollection<PolicyDoc>;
  readonly policyDecisions: OrgCollection<PolicyDecisionDoc>;
  readonly policySources: OrgCollection<PolicySourceDoc>;
  readonly activity: OrgCollection<ActivityDoc>;
  readonly auditLog: OrgCollection<AuditEntryDoc>;
  readonly notifications: OrgCollection<NotificationDoc>;
  readonly gateways: OrgCollection<GatewayDoc>;
  readonly gatewayDispatches: OrgCollection<GatewayDispatchDoc>;
  readonly workflows: OrgCollection<WorkflowDoc>;
  readonly workflowRuns: OrgCollection<WorkflowRunDoc>;
  readonly ragCollections: OrgCollection<RagCollectionDoc>;
  readonly ragDocuments: OrgCollection<RagDocumentDoc>;
  readonly mediaJobs: OrgCollection<MediaJobDoc>;
  readonly voiceSessions: OrgCollection<VoiceSessionDoc>;
}

export async function openCollections(store: MetadataStore): Promise<Collections> {
  return {
    ...(await openPlatformCollections(store)),
    realms: await store.orgCollection<RealmDoc>({ name: 'realms', idPrefix: 'rlm', scope: 'org', unique: [['name']] }),
    settings: await store.orgCollection<SettingsDoc>({ name: 'settings', idPrefix: 'set', scope: 'org', unique: [['singleton']] }),
    agents: await store.orgCollection<AgentDoc>({ name: 'agents', idPrefix: 'agt', scope: 'org', unique: [['name']] }),
    skills: await store.orgCollection<SkillDoc>({ name: 'skills', idPrefix: 'skl', scope: 'org', unique: [['slug']], indexes: ['visible_to', 'status'] }),
    memory: await store.orgCollection<MemoryDoc>({
      name: 'memory',
      idPrefix: 'mem',
      scope: 'org',
      indexes: ['realm', 'kind'],
      text: ['text', 'title'],
    }),
    conversations: await store.orgCollection<ConversationDoc>({ name: 'chat_conversations', idPrefix: 'cnv', scope: 'org' }),
    sources: await store.orgCollection<SourceDoc>({
      name: 'sources',
      idPrefix: 'src',
      scope: 'org',
      unique: [['name']],
      indexes: ['connector', 'status'],
    }),
    sourceSyncJobs: await store.orgCollection<SourceSyncJobDoc>({
      name: 'source_sync_jobs',
      idPrefix: 'sjb',
      scope: 'org',
      indexes: ['source_id', 'status'],
    }),
    mcpApprovals: await store.orgCollection<McpApprovalDoc>({ name: 'mcp_approvals', idPrefix: 'mapr', scope: 'org', indexes: ['status'] }),
    chatMessages: await store.orgCollection<ChatMessageDoc>({
      name: 'chat_messages',
      idPrefix: 'msg',
      scope: 'org',
      indexes: ['conversation_id', 'run_id', 'status'],
    }),
    channels: await store.orgCollection<ChannelDoc>({
      name: 'channels',
      idPrefix: 'chn',
      scope: 'org',
      unique: [['instance_name']],
      indexes: ['channel_type'],
    }),
    bindings: await store.orgCollection<BindingDoc>({ name: 'bindings', idPrefix: 'bnd', scope: 'org', indexes: ['channel_id', 'agent_id'] }),
    channelEvents: await store.orgCollection<ChannelEventDoc>({
      name: 'channel_events',
      idPrefix: 'cev',
      scope: 'org',
      unique: [['channel_id', 'key']],
      indexes: ['day'],
    }),
    pipelines: await store.orgCollection<PipelineDoc>({ name: 'pipelines', idPrefix: 'ppl', scope: 'org', unique: [['name']] }),
    pipelineRuns: await store.orgCollection<PipelineRunDoc>({
      name: 'pipeline_runs',
      idPrefix: 'prn',
      scope: 'org',
      indexes: ['pipeline_id', 'status'],
    }),
    pipelineRunEntries: await store.orgCollection<PipelineRunEntryDoc>({
      // the unique (run_id, seq) index also serves lookups by run_id
      name: 'pipeline_run_entries',
      idPrefix: 'pre',
      scope: 'org',
      unique: [['run_id', 'seq']],
    }),
    pipelineVersions: await store.orgCollection<PipelineVersionDoc>({
      // the unique (pipeline_id, version) index is also the optimistic lock of a change
      name: 'pipeline_versions',
      idPrefix: 'ppv',
      scope: 'org',
      unique: [['pipeline_id', 'version']],
    }),
    pipelineAgentRuns: await store.orgCollection<PipelineAgentRunDoc>({
      name: 'pipeline_agent_runs',
      idPrefix: 'run',
      scope: 'org',
      indexes: ['pipeline_run_id'],
    }),
    tasks: await store.orgCollection<TaskDoc>({
      name: 'tasks',
      idPrefix: 'tsk',
      scope: 'org',
      unique: [['name'], ['trigger_id']],
      indexes: ['trigger_kind', 'enabled'],
    }),
    // ids are the agent runs' ids (`run_...`)
    taskRuns: await store.orgCollection<TaskRunDoc>({ name: 'task_runs', idPrefix: 'run', scope: 'org', indexes: ['task_id', 'status'] }),
    inboundDeliveries: await store.orgCollection<InboundDeliveryDoc>({
      name: 'inbound_deliveries',
      idPrefix: 'dlv',
      scope: 'org',
      unique: [['task_id', 'sender_delivery_id']],
      indexes: ['task_id'],
    }),
    outboundWebhooks: await store.orgCollection<OutboundWebhookDoc>({
      name: 'outbound_webhooks',
      idPrefix: 'owh',
      scope: 'org',
      unique: [['name']],
    }),
    webhookDeliveries: await store.orgCollection<WebhookDeliveryDoc>({
      name: 'outbound_webhook_deliveries',
      idPrefix: 'owd',
      scope: 'org',
      indexes: ['webhook_id', 'status'],
    }),
    webhookSamples: await store.orgCollection<WebhookSampleDoc>({
      name: 'webhook_samples',
      idPrefix: 'wsm',
      scope: 'org',
      unique: [['name']],
    }),
    policies: await store.orgCollection<PolicyDoc>({ name: 'policies', idPrefix: 'pol', scope: 'org', unique: [['name']], indexes: ['enabled'] }),
    policyDecisions: await store.orgCollection<PolicyDecisionDoc>({
      name: 'policy_decisions',
      idPrefix: 'pdc',
      scope: 'org',
      indexes: ['result', 'run_id'],
    }),

    policySources: await store.orgCollection<PolicySourceDoc>({
      name: 'policy_sources',
      idPrefix: 'psr',
      scope: 'org',
      unique: [['name']],
      indexes: ['enabled'],
    }),
    // ids carry the entry's time (domains/activity/time-window.ts): since/until are id ranges
    activity: await store.orgCollection<ActivityDoc>({ name: 'activity', idPrefix: 'act', scope: 'org', indexes: ['kind', 'actor_id'] }),
    auditLog: await store.orgCollection<AuditEntryDoc>({ name: 'audit_log', idPrefix: 'aud', scope: 'org', indexes: ['kind', 'actor_id', 'action'] }),
    notifications: await store.orgCollection<NotificationDoc>({ name: 'notifications', idPrefix: 'ntf', scope: 'org', indexes: ['user_id', 'read'] }),
    gateways: await store.orgCollection<GatewayDoc>({ name: 'gateways', idPrefix: 'gtw', scope: 'org', unique: [['name']], indexes: ['is_default'] }),
    gatewayDispatches: await store.orgCollection<GatewayDispatchDoc>({
      name: 'gateway_dispatches',
      idPrefix: 'gdp',
      scope: 'org',
      indexes: ['gateway_id', 'status'],
    }),
    workflows: await store.orgCollection<WorkflowDoc>({ name: 'workflows', idPrefix: 'wfl', scope: 'org', unique: [['name']] }),
    workflowRuns: await store.orgCollection<WorkflowRunDoc>({ name: 'workflow_runs', idPrefix: 'wfr', scope: 'org', indexes: ['workflow_id', 'status'] }),
    ragCollections: await store.orgCollection<RagCollectionDoc>({
      name: 'rag_collections',
      idPrefix: 'rcol',
      scope: 'org',
      unique: [['name']],
      indexes: ['realm'],
    }),
    ragDocuments: await store.orgCollection<RagDocumentDoc>({
      name: 'rag_documents',
      idPrefix: 'rdoc',
      scope: 'org',
      unique: [['collection_id', 'name']],
      indexes: ['collection_id', 'status', 'realm'],
    }),
    mediaJobs: await store.orgCollection<MediaJobDoc>({ name: 'media_jobs', idPrefix: 'mjb', scope: 'org', indexes: ['status', 'run_id'] }),
    voiceSessions: await store.orgCollection<VoiceSessionDoc>({ name: 'voice_sessions', idPrefix: 'vcs', scope: 'org', indexes: ['state', 'day'] }),
  };
}
