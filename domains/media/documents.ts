/** The media job record (`media_jobs`): one task a media tool started on a media-generation platform. */
import type { MediaJobView } from '../../connectors/contract.js';
import type { StoredFields } from '../../runtime/store/types.js';

export const MEDIA_JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type MediaJobStatus = (typeof MEDIA_JOB_STATUSES)[number];
export const UNFINISHED: readonly MediaJobStatus[] = ['queued', 'running'];

export type MediaJobOutput = MediaJobView['outputs'][number];

export interface MediaJobDoc extends StoredFields {
  readonly realm: string;
  /** the agent run whose tool call started it (its outputs are that run's artifacts); null outside runs */
  readonly run_id: string | null;
  readonly source_id: string;
  /** the source's connector kind (whose `jobs` poll it) */
  readonly connector: string;
  /** the tool that started it, e.g. `media_text_to_video` */
  readonly tool: string;
  /** the platform's task id */
  readonly task_id: string;
  readonly status: MediaJobStatus;
  /** 0..1 */
  readonly progress: number;
  /** estimated platform credits; null when unknown */
  readonly cost: number | null;
  readonly outputs: readonly MediaJobOutput[];
  readonly error: { readonly code: string; readonly message: string } | null;
  /** what the tool asked for (kind, model, ratio, duration) */
  readonly request: Record<string, unknown>;
  readonly polls: number;
  readonly created_by: string | null;
  readonly finished_at: string | null;
}

export const viewOf = (doc: MediaJobDoc): MediaJobView => ({
  id: doc.id,
  task_id: doc.task_id,
  status: doc.status,
  progress: doc.progress,
  cost: doc.cost,
  outputs: doc.outputs,
  error: doc.error,
});
