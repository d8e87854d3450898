/**
 * The platform's metadata collections (identity, API keys, idempotency
 * records, agent runs and their transcripts, ingest pipelines and tokens): each
 * document type and its spec. The domains add theirs in domains/collections.ts.
 */
import type { GlobalCollection, MetadataStore, OrgCollection, StoredFields } from './store/types.js';

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

/** A context ingest pipeline: where the NDJSON posted with its tokens lands. */
export interface ContextPipelineDoc extends StoredFields {
  readonly name: string;
  readonly kind: 'webhook';
  readonly target_table: 'context_events' | 'context_nodes';
  /** the realm's name */
  readonly realm: string;
  readonly require_signature: boolean;
  /** `context_nodes` only: the row property that keys a graph node when the row has no `_key` (absent on older records) */
  readonly key_field?: string | null;
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
type AgentRunStatus = 'pending' | 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'cancelled';

export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** One agent run (chat reply or, later, task run); its transcript is in `agent_run_events`. */
/** the kinds of agent runs */
export type AgentRunKind = 'chat' | 'task' | 'workflow_step' | 'pipeline_agent';

export interface AgentRunDoc extends StoredFields {
  /** where the run was asked: a chat reply or binding (`chat`), a task, a workflow step, an agent run inside a pipeline run */
  readonly kind: AgentRunKind;
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
  /** set while the run is parked (runtime/agent/parking.ts): start-up recovery leaves it waiting */
  readonly parked_at?: string | null;
}

/** What a parked run needs to continue (runtime/agent/parking.ts); `id` is the run's id. */
export interface ParkedRunDoc extends StoredFields {
  /** null: the run waits for a tool result handed over (its context's `current.deferred`), not an approval */
  readonly approval_id: string | null;
  /** ms since the epoch: when the approval times out (the run's deadline when it waits for a result), and when the run does */
  readonly approval_deadline: number;
  readonly run_deadline: number;
  /** the machine's context at the wait (the current call without its resolved tool) */
  readonly context: Record<string, unknown>;
  /** the run's StartRunRequest data (everything but what its site's resumer rebuilds) */
  readonly request: Record<string, unknown>;
  /** the resumer that rebuilds the run's provider, tools and end handler */
  readonly site: string;
  readonly site_data: Record<string, unknown>;
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

/** A stored Idempotency-Key outcome (gateway/idempotency.ts). */
export interface IdempotencyRecord extends StoredFields {
  readonly scope: string;
  readonly key: string;
  readonly request_hash: string;
  readonly state: 'pending' | 'done';
  readonly status?: number;
  /** the response body, sealed with the guard's key */
  readonly response_body?: string;
  readonly response_headers?: Record<string, string>;
}

export interface PlatformCollections {
  readonly organizations: GlobalCollection<OrganizationDoc>;
  readonly users: GlobalCollection<UserDoc>;
  readonly memberships: OrgCollection<MembershipDoc>;
  readonly roles: OrgCollection<RoleDoc>;
  readonly apiKeys: OrgCollection<ApiKeyDoc>;
  readonly invites: OrgCollection<InviteDoc>;
  readonly idempotency: OrgCollection<IdempotencyRecord>;
  readonly contextPipelines: OrgCollection<ContextPipelineDoc>;
  readonly ingestTokens: OrgCollection<IngestTokenDoc>;
  readonly agentRuns: OrgCollection<AgentRunDoc>;
  readonly agentRunEvents: OrgCollection<AgentRunEventDoc>;
  readonly parkedRuns: OrgCollection<ParkedRunDoc>;
}

export async function openPlatformCollections(store: MetadataStore): Promise<PlatformCollections> {
  return {
    organizations: await store.globalCollection<OrganizationDoc>({ name: 'organizations', idPrefix: 'org', scope: 'global' }),
    users: await store.globalCollection<UserDoc>({ name: 'users', idPrefix: 'usr', scope: 'global', unique: [['email']] }),
    memberships: await store.orgCollection<MembershipDoc>({
      name: 'memberships',
      idPrefix: 'mbr',
      scope: 'org',
      unique: [['user_id']],
      indexes: ['role'],
    }),
    roles: await store.orgCollection<RoleDoc>({ name: 'roles', idPrefix: 'rol', scope: 'org', unique: [['name']] }),
    apiKeys: await store.orgCollection<ApiKeyDoc>({ name: 'api_keys', idPrefix: 'key', scope: 'org', unique: [['key_hash']] }),
    invites: await store.orgCollection<InviteDoc>({
      name: 'invites',
      idPrefix: 'inv',
      scope: 'org',
      unique: [['token_hash']],
      indexes: ['email'],
    }),
    idempotency: await store.orgCollection<IdempotencyRecord>({
      name: 'idempotency_keys',
      idPrefix: 'idk',
      scope: 'org',
      unique: [['scope', 'key']],
    }),
    contextPipelines: await store.orgCollection<ContextPipelineDoc>({
      name: 'context_pipelines',
      idPrefix: 'cpl',
      scope: 'org',
      unique: [['name']],
    }),
    ingestTokens: await store.orgCollection<IngestTokenDoc>({
      name: 'ingest_tokens',
      idPrefix: 'itk',
      scope: 'org',
      unique: [['token_hash']],
      indexes: ['pipeline_id'],
    }),
    agentRuns: await store.orgCollection<AgentRunDoc>({
      name: 'agent_runs',
      idPrefix: 'run',
      scope: 'org',
      indexes: ['status', 'conversation_id', 'day', 'task_id'],
    }),
    agentRunEvents: await store.orgCollection<AgentRunEventDoc>({
      // the unique (run_id, seq) index also serves lookups by run_id
      name: 'agent_run_events',
      idPrefix: 'rev',
      scope: 'org',
      unique: [['run_id', 'seq']],
      indexes: ['approval_id'],
    }),
    parkedRuns: await store.orgCollection<ParkedRunDoc>({ name: 'parked_runs', idPrefix: 'run', scope: 'org' }),
  };
}
