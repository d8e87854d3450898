/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

export const ENGINE_TYPES = ['temporal', 'webhook'] as const;
export type EngineType = (typeof ENGINE_TYPES)[number];

type HealthStatus = 'unknown' | 'ok' | 'down';

/** A gateway: an external orchestration engine runs can dispatch to. The api_key is sealed at rest, never stored plain. */
export interface GatewayDoc extends StoredFields {
  readonly name: string;
  /** fixed at creation */
  readonly engine_type: EngineType;
  readonly base_url: string;
  /** sealed with a key bound to the organization and gateway id (null: none given) */
  readonly api_key_sealed: string | null;
  /** last 4 characters of the key, to recognise it when masked */
  readonly api_key_hint: string | null;
  /** at most one per organization */
  readonly is_default: boolean;
  /** JSON object passed on every dispatch (temporal: namespace, task_queue, workflow_type) */
  readonly context: Record<string, unknown>;
  readonly last_health_status: HealthStatus;
  readonly last_health_at: string | null;
  readonly last_health_error: string | null;
  readonly created_by: string;
}

type DispatchStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One dispatch of a step or task run to a gateway. */
export interface GatewayDispatchDoc extends StoredFields {
  readonly gateway_id: string;
  readonly status: DispatchStatus;
  readonly workflow_run_id: string;
  readonly step_id: string;
  /** the engine's id of the work: a Temporal workflow id (and run id), the webhook dispatch id */
  readonly external_ref: string | null;
  readonly output: Record<string, unknown> | string | null;
  readonly error: string | null;
  readonly finished_at: string | null;
}
