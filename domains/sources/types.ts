/** Stored shapes of the sources resource (collections `sources` and `source_sync_jobs`). */
import type { StoredFields } from '../../runtime/store/types.js';

/**
 * Status of a source:
 * - `pending`: created or changed, never validated since
 * - `synced`: the last validation or sync succeeded
 * - `failed`: the last validation or sync failed (`last_error` says why)
 * - `syncing`: a sync job is running
 */
type SourceStatus = 'pending' | 'synced' | 'failed' | 'syncing';

/**
 * Who sees a source's tools: `organization` (every run of the organization),
 * `restricted` (only runs that name it: an API key scoped to `source_ids`, a
 * task's `enabled_source_ids`).
 */
export type SourceVisibility = 'organization' | 'restricted';

export interface SourceError {
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
}

export interface SourceDoc extends StoredFields {
  readonly name: string;
  /** the connector kind */
  readonly connector: string;
  readonly realm: string;
  /** the config, AES-256-GCM sealed (domains/sources/config-secrets.ts); never stored in clear */
  readonly config_sealed: string;
  /** cron (UTC) for automatic sync; '' = none */
  readonly schedule: string;
  readonly visibility: SourceVisibility;
  readonly status: SourceStatus;
  readonly last_error: SourceError | null;
  readonly last_validated_at: string | null;
  readonly last_synced_at: string | null;
  readonly created_by: string;
}

type SyncJobStatus = 'running' | 'succeeded' | 'failed';

/** One sync of a source: its history is the list of these. */
export interface SourceSyncJobDoc extends StoredFields {
  readonly source_id: string;
  readonly status: SyncJobStatus;
  /** `manual` (POST /sources/:id/sync) or `schedule` */
  readonly trigger: 'manual' | 'schedule';
  /** 0..1, as last reported by the connector */
  readonly progress: number;
  readonly message: string | null;
  readonly nodes: number;
  readonly relationships: number;
  readonly details: Record<string, unknown> | null;
  readonly error: SourceError | null;
  readonly started_at: string;
  readonly finished_at: string | null;
  readonly created_by: string | null;
}

/** pending -> approved | denied (by a person) | expired; approved -> used (the write ran once) */
type McpApprovalStatus = 'pending' | 'approved' | 'denied' | 'used';

/** A write asked for through the /mcp endpoint, waiting for (or carrying) a person's decision. */
export interface McpApprovalDoc extends StoredFields {
  readonly tool: string;
  readonly source_id: string | null;
  readonly args: Record<string, unknown>;
  /** sha256 of the canonical arguments: the approval is good for exactly these */
  readonly args_hash: string;
  readonly status: McpApprovalStatus;
  /** the user the asking credential acts for, and the API key when one was used */
  readonly requested_by: string;
  readonly api_key_id: string | null;
  readonly decided_by: string | null;
  readonly decided_at: string | null;
  readonly expires_at: string;
}
