/**
 * Every metadata collection: its document type and its spec (unique sets,
 * indexes, text fields). Opened once at start; creation is idempotent.
 */
import type { IdempotencyRecord } from '../gateway/idempotency.js';
import type { GlobalCollection, MetadataStore, OrgCollection, StoredFields } from './store/types.js';
import type { McpApprovalDoc, SourceDoc, SourceSyncJobDoc } from './sources/types.js';
import type { InboundDeliveryDoc, TaskDoc, TaskRunDoc } from './tasks/types.js';
import type { ActivityDoc, AuditEntryDoc, NotificationDoc } from './activity/types.js';

export interface OrganizationDoc extends StoredFields {
  readonly name: string;
}

export interface UserDoc extends StoredFields {
  /** lowercased */
  readonly email: string;
  readonly password_hash: string;
}

export interface MembershipDoc extends StoredFields {
  readonly user_id: string;
  readonly role: string;
}

export interface RoleDoc extends StoredFields {
  readonly name: string;
  readonly description: string;
  readonly permissions: string[];
}

export interface ApiKeyDoc extends StoredFields {
  readonly name: string;
  readonly permissions: string[];
  readonly source_ids: string[] | null;
  readonly key_hash: string;
  /** first characters of the key, to recognise it in a list */
  readonly key_prefix: string;
  readonly active: boolean;
  readonly expires_in_days: number | null;
  readonly expires_at: string | null;
  readonly created_by: string;
  readonly revoked_at: string | null;
  readonly rotated_at: string | null;
  readonly last_used_at: string | null;
}

export interface InviteDoc extends StoredFields {
  readonly email: string;
  readonly role: string;
  readonly token_hash: string;
  readonly expires_at: string;
  readonly invited_by: string;
  readonly accepted_at: string | null;
}

export interface RealmDoc extends StoredFields {
  readonly name: string;
  readonly display_name: string | null;
  readonly description: string | null;
  readonly color: string | null;
}

export interface SettingsDoc extends StoredFields {
  /** always true: makes the document a singleton per organization */
  readonly singleton: true;
  readonly llm_provider: 'openai' | 'anthropic' | null;
  readonly llm_model: string | null;
  readonly llm_base_url: string | null;
  /**
   * the organization's own key for its llm_base_url, sealed (runtime/llm/org-key.ts); never
   * shown. Absent on records written before it existed: read as null.
   */
  readonly llm_api_key_sealed?: string | null;
  readonly embedding_model: string | null;
  readonly auto_embed_on_ingest: boolean;
  readonly approval_timeout_secs: number;
}

export interface AgentDoc extends StoredFields {
  readonly agent_type: string;
  readonly name: string;
  readonly config: Record<string, unknown>;
  readonly enabled: boolean;
}

export interface SkillDoc extends StoredFields {
  readonly name: string;
  readonly slug: string;
  readonly description: string;
  readonly version: string;
  readonly tags: string[];
  readonly content: string;
  readonly scope: 'org' | 'user';
  /** the user a `user`-scoped skill belongs to */
  readonly owner_user_id: string | null;
  /** `org`, or the owner's user id: lets one `in` filter list what a caller may see */
  readonly visible_to: string;
  readonly status: SkillStatus;
  readonly created_by: string;
  /** who moved it to `pending_approval` last; the four-eyes rule compares the approver with it */
  readonly submitted_by: string | null;
  readonly reviewed_by: string | null;
  readonly reviewed_at: string | null;
  readonly review_note: string | null;
}

export type SkillStatus = 'draft' | 'pending_approval' | 'approved' | 'rejected';

export const MEMORY_KINDS = ['fact', 'guideline', 'preference', 'note'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
/** the largest memory text, in bytes of UTF-8, for the REST route and the `memory.store` tool alike */
export const MAX_MEMORY_TEXT_BYTES = 32 * 1024;

export interface MemoryDoc extends StoredFields {
  readonly kind: MemoryKind;
  /** the realm's name (immutable, so it never goes stale) */
  readonly realm: string;
  readonly text: string;
  readonly title: string | null;
  readonly tags: string[];
  /** 32-bit float in [0, 1] */
  readonly importance: number;
  readonly created_by: string;
}

/** A context ingest pipeline: where the NDJSON posted with its tokens lands. */
export interface ContextPipelineDoc extends StoredFields {
  readonly name: string;
  readonly kind: 'webhook';
  readonly target_table: 'context_events' | 'context_nodes';
  /** the realm's name */
  readonly realm: string;
  readonly require_signature: boolean;
  readonly created_by: string;
}

/** An ingest token of a pipeline: only its sha256 is kept; the signing secret is kept sealed to check HMACs and never shown again. */
export interface IngestTokenDoc extends StoredFields {
  readonly pipeline_id: string;
  readonly token_hash: string;
  /** `ctx_` plus the first 4 random characters, to recognise a token in a list */
  readonly token_prefix: string;
  /** the signing secret, sealed (AES-256-GCM) and bound to organization, pipeline and token (ingest/tokens.ts) */
  readonly signing_secret_sealed?: string;
  /** a record written before secrets were sealed: the plaintext, sealed at the next start */
  readonly signing_secret?: string;
  readonly created_by: string;
  readonly revoked_at: string | null;
}

/** Status of an agent run: `pending` -> `running` (<-> `awaiting_approval`) -> `succeeded` | `failed` | `cancelled`. */
export type AgentRunStatus = 'pending' | 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'cancelled';

export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** One agent run (chat reply or, later, task run); its transcript is in `agent_run_events`. */
export interface AgentRunDoc extends StoredFields {
  readonly kind: 'chat' | 'task';
  readonly status: AgentRunStatus;
  /** why it ended when not `succeeded`: `cancelled`, `max_turns`, `timeout`, `cost_cap_exceeded`, `interrupted`, `shutdown`, an LLM error code */
  readonly reason: string | null;
  readonly error_message: string | null;
  readonly input: Record<string, unknown>;
  readonly provider: string | null;
  readonly model: string | null;
  readonly usage: TokenUsage;
  readonly cost_usd: number;
  readonly turns: number;
  readonly conversation_id: string | null;
  readonly message_id: string | null;
  readonly task_id: string | null;
  readonly created_by: string;
  /** UTC day the run started (YYYY-MM-DD): the daily cost cap sums a day's runs */
  readonly day: string;
  readonly started_at: string;
  readonly finished_at: string | null;
}

/** One transcript entry of a run, append-only, `seq` increasing from 1 per run. */
export interface AgentRunEventDoc extends StoredFields {
  readonly run_id: string;
  readonly seq: number;
  /** message_start, message, content_delta, usage, tool_call_start, approval_required, approval_decision, tool_result, error, message_end */
  readonly type: string;
  readonly data: Record<string, unknown>;
  /** set on approval events, to find an approval by id */
  readonly approval_id: string | null;
  readonly at: string;
}

export interface ConversationDoc extends StoredFields {
  readonly title: string;
  /** the agent that answers (its config: system prompt, model, max_turns) */
  readonly agent_id: string | null;
  /** `approval_defaults.write` of the conversation's runs */
  readonly approval_write: 'allow' | 'ask';
  readonly created_by: string;
  readonly last_message_at: string | null;
}

export type ChatMessageStatus = 'complete' | 'streaming' | 'failed' | 'cancelled';

export interface ChatMessageDoc extends StoredFields {
  readonly conversation_id: string;
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly status: ChatMessageStatus;
  /** the run that wrote an assistant message */
  readonly run_id: string | null;
  readonly finish_reason: string | null;
  readonly usage: TokenUsage | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly created_by: string;
}

/** An outbound webhook (`/webhooks`): secrets are sealed at rest (runtime/webhooks/secrets.ts), never stored plain. */
export interface OutboundWebhookDoc extends StoredFields {
  readonly name: string;
  readonly url: string;
  readonly secret_sealed: string;
  /** last 4 characters of the secret, to recognise it when masked */
  readonly secret_hint: string;
  /** the secret before the last rotation, still signing until `previous_secret_expires_at` */
  readonly previous_secret_sealed: string | null;
  readonly previous_secret_expires_at: string | null;
  /** retries after the first attempt */
  readonly retries: number;
  readonly created_by: string;
}

export type WebhookDeliveryStatus = 'queued' | 'in_flight' | 'delivered' | 'failed';

/** One HTTP attempt of an outbound delivery. */
export interface WebhookAttempt {
  readonly n: number;
  readonly at: string;
  /** HTTP status, or null when no answer came (network error, timeout) */
  readonly status: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
}

/** An outbound delivery: persisted before the first attempt, so a restart resumes it. */
export interface WebhookDeliveryDoc extends StoredFields {
  readonly webhook_id: string;
  /** `webhook.test`, `agent.send` */
  readonly event: string;
  /** the exact bytes sent (and signed), as UTF-8 JSON text */
  readonly body: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: WebhookAttempt[];
  readonly max_attempts: number;
  readonly next_attempt_at: string | null;
  readonly finished_at: string | null;
  /** the agent run that sent it (webhooks.send), when there is one */
  readonly run_id: string | null;
  readonly created_by: string;
}

/** A saved custom webhook sample (built-in ones live in runtime/webhook-samples). */
export interface WebhookSampleDoc extends StoredFields {
  readonly name: string;
  readonly description: string;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly created_by: string;
}

/** A pipeline definition (`/pipelines`): what an external execution runs; each change bumps `version`. */
export interface PipelineDoc extends StoredFields {
  readonly name: string;
  readonly description: string | null;
  /** realm the run's graph writes default to */
  readonly realm: string;
  /** free-form steps/configuration the executor reads */
  readonly definition: Record<string, unknown>;
  readonly version: number;
  readonly created_by: string;
}

export type PipelineRunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One execution of a pipeline; its agent reports log lines and progress with a pipeline-scoped token. */
export interface PipelineRunDoc extends StoredFields {
  readonly pipeline_id: string;
  readonly pipeline_version: number;
  readonly status: PipelineRunStatus;
  readonly parameters: Record<string, unknown>;
  /** latest `progress` report */
  readonly progress: { readonly fraction: number; readonly message: string | null; readonly phase: string | null; readonly at: string } | null;
  readonly phase: string | null;
  readonly log_count: number;
  readonly started_by: string;
  readonly token_expires_at: string;
  readonly finished_at: string | null;
  readonly error: string | null;
}

/** A log line or progress report of a pipeline run, in arrival order (`seq`). */
export interface PipelineRunEntryDoc extends StoredFields {
  readonly run_id: string;
  readonly seq: number;
  readonly kind: 'log' | 'progress';
  readonly level: string;
  readonly message: string | null;
  readonly phase: string | null;
  readonly fraction: number | null;
}

/** How a channel reaches its chat platform: pasted tokens today; OAuth and QR later add kinds. */
export interface ChannelConnection {
  readonly kind: 'tokens' | 'oauth' | 'qr';
  readonly status: 'connected' | 'failed';
  /** bot_token, signing_secret and app_token (when given) as JSON, sealed (AES-256-GCM); never returned */
  readonly credentials_sealed: string;
  readonly api_base_url: string | null;
  /** Socket Mode (an app token was given) instead of the Events URL */
  readonly socket_mode: boolean;
  readonly team_id: string | null;
  readonly bot_user_id: string | null;
  readonly bot_id: string | null;
  readonly scopes: string[];
  readonly connected_at: string;
}

/** A chat-platform channel integration (`service_channel`): where inbound messages come from and replies go. */
export interface ChannelDoc extends StoredFields {
  readonly channel_type: string;
  readonly display_name: string;
  readonly system_prompt: string | null;
  readonly source_ids: string[];
  readonly response_mode: 'disabled' | 'enabled' | 'agent';
  readonly is_active: boolean;
  readonly filter_config: Record<string, unknown> | null;
  readonly instance_name: string;
  readonly connection: ChannelConnection | null;
  readonly created_by: string;
}

/** A channel binding: which agent answers which messages of a channel, and how. */
export interface BindingDoc extends StoredFields {
  /** the agent as given (id or name) and its id */
  readonly agent: string;
  readonly agent_id: string;
  /** the channel record id (match_rule.channel), top level for the index */
  readonly channel_id: string;
  readonly match_rule: {
    readonly channel: string;
    /** the chat channel's name (no #); null: every chat channel of the integration */
    readonly slack_channel: string | null;
    readonly mentioned: boolean;
    readonly preserve_thread: boolean;
  };
  /** no write tool runs for this binding's runs */
  readonly read_only: boolean;
  /** `ask`: write tools wait for an approval posted in the thread */
  readonly approval_write: 'allow' | 'ask';
  /** answer messages of other bots (never the service's own) */
  readonly allow_bots: boolean;
  readonly enabled: boolean;
  readonly created_by: string;
}

/** An inbound chat event already taken (dedupe of retries and of app_mention + message for one post). */
export interface ChannelEventDoc extends StoredFields {
  readonly channel_id: string;
  /** `event:<event_id>` or `message:<chat channel>:<ts>` */
  readonly key: string;
  readonly received_at: string;
  /** UTC day received (YYYY-MM-DD): old keys are swept by day */
  readonly day: string;
}

/** A Rego policy (`/policies`, feature `policies`): its package is `service.<name>`. */
export interface PolicyDoc extends StoredFields {
  readonly name: string;
  readonly package_path: string;
  /** exactly one of rego_code and rego_file (a path in the organization's file store, read at load) */
  readonly rego_code: string | null;
  readonly rego_file: string | null;
  readonly enabled: boolean;
  readonly created_by: string;
}

/** One policy decision on a tool call (the decision log, `GET /policies/decisions`). */
export interface PolicyDecisionDoc extends StoredFields {
  /** the org's bundle revision the decision was made with */
  readonly revision: string;
  /** `{subject, resource, action}` with secret-looking argument values masked */
  readonly input: Record<string, unknown>;
  readonly result: 'allow' | 'deny';
  readonly messages: string[];
  /** set when the evaluation failed (the call was denied: fail closed) */
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly run_id: string | null;
  readonly at: string;
}

export interface Collections {
  readonly organizations: GlobalCollection<OrganizationDoc>;
  readonly users: GlobalCollection<UserDoc>;
  readonly memberships: OrgCollection<MembershipDoc>;
  readonly roles: OrgCollection<RoleDoc>;
  readonly apiKeys: OrgCollection<ApiKeyDoc>;
  readonly invites: OrgCollection<InviteDoc>;
  readonly realms: OrgCollection<RealmDoc>;
  readonly settings: OrgCollection<SettingsDoc>;
  readonly agents: OrgCollection<AgentDoc>;
  readonly skills: OrgCollection<SkillDoc>;
  readonly memory: OrgCollection<MemoryDoc>;
  readonly idempotency: OrgCollection<IdempotencyRecord>;
  readonly contextPipelines: OrgCollection<ContextPipelineDoc>;
  readonly ingestTokens: OrgCollection<IngestTokenDoc>;
  readonly agentRuns: OrgCollection<AgentRunDoc>;
  readonly agentRunEvents: OrgCollection<AgentRunEventDoc>;
  readonly conversations: OrgCollection<ConversationDoc>;
  readonly chatMessages: OrgCollection<ChatMessageDoc>;
  readonly channels: OrgCollection<ChannelDoc>;
  readonly bindings: OrgCollection<BindingDoc>;
  readonly channelEvents: OrgCollection<ChannelEventDoc>;
  readonly pipelines: OrgCollection<PipelineDoc>;
  readonly pipelineRuns: OrgCollection<PipelineRunDoc>;
  readonly pipelineRunEntries: OrgCollection<PipelineRunEntryDoc>;
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
  readonly activity: OrgCollection<ActivityDoc>;
  readonly auditLog: OrgCollection<AuditEntryDoc>;
  readonly notifications: OrgCollection<NotificationDoc>;
}

export async function openCollections(store: MetadataStore): Promise<Collections> {
  return {
    organizations: await store.globalCollection<OrganizationDoc>({ name: 'organizations', idPrefix: 'org', scope: 'global' }),
    users: await store.globalCollection<UserDoc>({ name: 'users', idPrefix: 'usr', scope: 'global', unique: [['email']] }),
    memberships: await store.orgCollection<MembershipDoc>({
      name: 'memberships', idPrefix: 'mbr', scope: 'org', unique: [['user_id']], indexes: ['role'],
    }),
    roles: await store.orgCollection<RoleDoc>({ name: 'roles', idPrefix: 'rol', scope: 'org', unique: [['name']] }),
    apiKeys: await store.orgCollection<ApiKeyDoc>({ name: 'api_keys', idPrefix: 'key', scope: 'org', unique: [['key_hash']] }),
    invites: await store.orgCollection<InviteDoc>({
      name: 'invites', idPrefix: 'inv', scope: 'org', unique: [['token_hash']], indexes: ['email'],
    }),
    realms: await store.orgCollection<RealmDoc>({ name: 'realms', idPrefix: 'rlm', scope: 'org', unique: [['name']] }),
    settings: await store.orgCollection<SettingsDoc>({ name: 'settings', idPrefix: 'set', scope: 'org', unique: [['singleton']] }),
    agents: await store.orgCollection<AgentDoc>({ name: 'agents', idPrefix: 'agt', scope: 'org', unique: [['name']] }),
    skills: await store.orgCollection<SkillDoc>({ name: 'skills', idPrefix: 'skl', scope: 'org', unique: [['slug']], indexes: ['visible_to', 'status'] }),
    memory: await store.orgCollection<MemoryDoc>({
      name: 'memory', idPrefix: 'mem', scope: 'org', indexes: ['realm', 'kind'], text: ['text', 'title'],
    }),
    idempotency: await store.orgCollection<IdempotencyRecord>({
      name: 'idempotency_keys', idPrefix: 'idk', scope: 'org', unique: [['scope', 'key']],
    }),
    contextPipelines: await store.orgCollection<ContextPipelineDoc>({
      name: 'context_pipelines', idPrefix: 'cpl', scope: 'org', unique: [['name']],
    }),
    ingestTokens: await store.orgCollection<IngestTokenDoc>({
      name: 'ingest_tokens', idPrefix: 'itk', scope: 'org', unique: [['token_hash']], indexes: ['pipeline_id'],
    }),
    agentRuns: await store.orgCollection<AgentRunDoc>({
      name: 'agent_runs', idPrefix: 'run', scope: 'org', indexes: ['status', 'conversation_id', 'day', 'task_id'],
    }),
    agentRunEvents: await store.orgCollection<AgentRunEventDoc>({
      // the unique (run_id, seq) index also serves lookups by run_id
      name: 'agent_run_events', idPrefix: 'rev', scope: 'org', unique: [['run_id', 'seq']], indexes: ['approval_id'],
    }),
    conversations: await store.orgCollection<ConversationDoc>({ name: 'chat_conversations', idPrefix: 'cnv', scope: 'org' }),
    sources: await store.orgCollection<SourceDoc>({
      name: 'sources', idPrefix: 'src', scope: 'org', unique: [['name']], indexes: ['connector', 'status'],
    }),
    sourceSyncJobs: await store.orgCollection<SourceSyncJobDoc>({
      name: 'source_sync_jobs', idPrefix: 'sjb', scope: 'org', indexes: ['source_id', 'status'],
    }),
    mcpApprovals: await store.orgCollection<McpApprovalDoc>({ name: 'mcp_approvals', idPrefix: 'mapr', scope: 'org', indexes: ['status'] }),
    chatMessages: await store.orgCollection<ChatMessageDoc>({
      name: 'chat_messages', idPrefix: 'msg', scope: 'org', indexes: ['conversation_id', 'run_id', 'status'],
    }),
    channels: await store.orgCollection<ChannelDoc>({
      name: 'channels', idPrefix: 'chn', scope: 'org', unique: [['instance_name']], indexes: ['channel_type'],
    }),
    bindings: await store.orgCollection<BindingDoc>({ name: 'bindings', idPrefix: 'bnd', scope: 'org', indexes: ['channel_id', 'agent_id'] }),
    channelEvents: await store.orgCollection<ChannelEventDoc>({
      name: 'channel_events', idPrefix: 'cev', scope: 'org', unique: [['channel_id', 'key']], indexes: ['day'],
    }),
    pipelines: await store.orgCollection<PipelineDoc>({ name: 'pipelines', idPrefix: 'ppl', scope: 'org', unique: [['name']] }),
    pipelineRuns: await store.orgCollection<PipelineRunDoc>({
      name: 'pipeline_runs', idPrefix: 'prn', scope: 'org', indexes: ['pipeline_id', 'status'],
    }),
    pipelineRunEntries: await store.orgCollection<PipelineRunEntryDoc>({
      // the unique (run_id, seq) index also serves lookups by run_id
      name: 'pipeline_run_entries', idPrefix: 'pre', scope: 'org', unique: [['run_id', 'seq']],
    }),
    tasks: await store.orgCollection<TaskDoc>({
      name: 'tasks', idPrefix: 'tsk', scope: 'org', unique: [['name'], ['trigger_id']], indexes: ['trigger_kind', 'enabled'],
    }),
    // ids are the agent runs' ids (`run_...`)
    taskRuns: await store.orgCollection<TaskRunDoc>({ name: 'task_runs', idPrefix: 'run', scope: 'org', indexes: ['task_id', 'status'] }),
    inboundDeliveries: await store.orgCollection<InboundDeliveryDoc>({
      name: 'inbound_deliveries', idPrefix: 'dlv', scope: 'org', unique: [['task_id', 'sender_delivery_id']], indexes: ['task_id'],
    }),
    outboundWebhooks: await store.orgCollection<OutboundWebhookDoc>({
      name: 'outbound_webhooks', idPrefix: 'owh', scope: 'org', unique: [['name']],
    }),
    webhookDeliveries: await store.orgCollection<WebhookDeliveryDoc>({
      name: 'outbound_webhook_deliveries', idPrefix: 'owd', scope: 'org', indexes: ['webhook_id', 'status'],
    }),
    webhookSamples: await store.orgCollection<WebhookSampleDoc>({
      name: 'webhook_samples', idPrefix: 'wsm', scope: 'org', unique: [['name']],
    }),
    policies: await store.orgCollection<PolicyDoc>({ name: 'policies', idPrefix: 'pol', scope: 'org', unique: [['name']], indexes: ['enabled'] }),
    policyDecisions: await store.orgCollection<PolicyDecisionDoc>({
      name: 'policy_decisions', idPrefix: 'pdc', scope: 'org', indexes: ['result', 'run_id'],
    }),
    // ids carry the entry's time (runtime/activity/time-window.ts): since/until are id ranges
    activity: await store.orgCollection<ActivityDoc>({ name: 'activity', idPrefix: 'act', scope: 'org', indexes: ['kind', 'actor_id'] }),
    auditLog: await store.orgCollection<AuditEntryDoc>({ name: 'audit_log', idPrefix: 'aud', scope: 'org', indexes: ['kind', 'actor_id', 'action'] }),
    notifications: await store.orgCollection<NotificationDoc>({ name: 'notifications', idPrefix: 'ntf', scope: 'org', indexes: ['user_id', 'read'] }),
  };
}
