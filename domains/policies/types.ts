/** Stored documents of the policy domain beyond policies and decisions (those are in runtime/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

/** One Rego module of a policy source: its path (relative to git_path for git sources) and text. */
export interface PolicySourceModule {
  readonly path: string;
  readonly rego: string;
}

/** A policy source (`/policies/sources`): a git repository synced on demand, or modules given inline. */
export interface PolicySourceDoc extends StoredFields {
  readonly name: string;
  readonly source_type: 'git_repo' | 'inline';
  readonly git_url: string | null;
  readonly git_branch: string;
  /** folder in the repository ('' = root) */
  readonly git_path: string;
  /** sealed (runtime/policies/source-secrets.ts); never shown */
  readonly git_ssh_key_sealed: string | null;
  /** inline: as given; git: the last good sync's modules (what the bundle uses, so a failed sync changes nothing) */
  readonly modules: PolicySourceModule[];
  readonly enabled: boolean;
  readonly last_sync_status: 'never' | 'running' | 'succeeded' | 'failed';
  readonly last_sync_error: { readonly message: string; readonly file: string | null; readonly line: number | null; readonly column: number | null } | null;
  readonly last_synced_at: string | null;
  /** the commit of the last good sync */
  readonly commit: string | null;
  readonly created_by: string;
}
