/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

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

/**
 * An immutable snapshot of a pipeline definition: written by every create,
 * change and revert (`version` n, unique per pipeline), deleted with the pipeline.
 */
export interface PipelineVersionDoc extends StoredFields {
  readonly pipeline_id: string;
  readonly version: number;
  readonly name: string;
  readonly description: string | null;
  readonly realm: string;
  readonly definition: Record<string, unknown>;
  readonly created_by: string;
  readonly message: string | null;
  /** set on a revert: the version whose content this one repeats */
  readonly reverted_from: number | null;
}

/** An agent run started inside a pipeline run (`/pipeline-agent/runs`); its id is the agent run's. */
export interface PipelineAgentRunDoc extends StoredFields {
  readonly pipeline_run_id: string;
  readonly pipeline_id: string;
  readonly instruction: string;
  /** the agent asked for (id or name), null for the organization's default */
  readonly agent: string | null;
  readonly inputs: Record<string, unknown>;
  /** the run's final text, once it ended */
  readonly output: string | null;
  readonly created_by: string;
}
