/**
 * Every metadata collection: its document type and its spec (unique sets,
 * indexes, text fields). Opened once at start; creation is idempotent.
 */
import type { IdempotencyRecord } from '../gateway/idempotency.js';
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

export interface RealmDoc extends StoredFields {
  readonly name: string;
  readonly display_name: string | null;
  readonly description: string | null;
  readonly color: string | null;
}

export interface SettingsDoc extends StoredFields {
  /** always true: makes the document a singleton per organization */
  readonly singleton: true;
  readonly llm_provider: string | null;
  readonly llm_model: string | null;
  readonly llm_base_url: string | null;
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
  readonly status: 'draft' | 'pending_approval' | 'approved' | 'rejected';
}

export interface MemoryDoc extends StoredFields {
  readonly kind: string;
  readonly realm: string;
  readonly text: string;
  readonly title: string | null;
  readonly tags: string[];
  /** 32-bit float in [0, 1] */
  readonly importance: number;
  readonly created_by: string;
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
    skills: await store.orgCollection<SkillDoc>({ name: 'skills', idPrefix: 'skl', scope: 'org', unique: [['slug']], indexes: ['scope'] }),
    memory: await store.orgCollection<MemoryDoc>({
      name: 'memory', idPrefix: 'mem', scope: 'org', indexes: ['realm', 'kind'], text: ['text', 'title'],
    }),
    idempotency: await store.orgCollection<IdempotencyRecord>({
      name: 'idempotency_keys', idPrefix: 'idk', scope: 'org', unique: [['scope', 'key']],
    }),
  };
}
