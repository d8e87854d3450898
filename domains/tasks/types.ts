/**
 * Stored shapes of tasks, task runs and inbound webhook deliveries (the
 * collections are declared in runtime/collections.ts).
 */
import type { StoredFields } from '../../runtime/store/types.js';
import type { TriggerOrigin } from './firing.js';
import type { SignatureScheme } from './signatures/types.js';

export const TRIGGER_KINDS = ['schedule', 'webhook', 'lifecycle'] as const;
type TriggerKind = (typeof TRIGGER_KINDS)[number];

/** Values a task gets when its create body leaves them out. */
export const TASK_DEFAULTS = {
  /** the spec's default per trigger */
  rate_limit_per_minute: 120,
  timestamp_tolerance_secs: 300,
  max_concurrent_runs: 1,
} as const;

export interface TaskDoc extends StoredFields {
  readonly name: string;
  /** agent name or id; null = the organization's default agent */
  readonly agent: string | null;
  readonly realm: string | null;
  readonly trigger_kind: TriggerKind;
  /** five-field cron, UTC (schedule) */
  readonly cron: string | null;
  /** the IANA zone `cron` is read in (schedule); absent on tasks stored before zones: UTC */
  readonly timezone?: string | null;
  /** platform event names (lifecycle) */
  readonly events: string[] | null;
  /** the path id of `/hooks/:trigger_id` (webhook); random, unique across organizations */
  readonly trigger_id?: string;
  /** the HMAC secret, sealed with a key derived from JWT_SECRET (webhook) */
  readonly secret_sealed: string | null;
  /** the secret before the last rotation, still accepted until `previous_secret_expires_at` */
  readonly previous_secret_sealed: string | null;
  readonly previous_secret_expires_at: string | null;
  readonly verify_signature: boolean;
  /** how `/hooks/:trigger_id` checks a delivery (domains/tasks/signatures/); absent on tasks saved before schemes: `service` */
  readonly signature_scheme?: SignatureScheme;
  /** opt-in replay protection: `X-Service-Timestamp` signed with the body and within the tolerance */
  readonly require_timestamp: boolean;
  readonly timestamp_tolerance_secs: number;
  readonly input_template: Record<string, unknown> | null;
  readonly input: Record<string, unknown> | null;
  readonly approval_write: 'allow' | 'ask';
  readonly cost_cap_usd_per_day: number | null;
  readonly max_concurrent_runs: number;
  /** a gateway (id, name or `default`) its runs are dispatched to instead of running an agent locally; absent or null: local */
  readonly gateway?: string | null;
  readonly enabled_source_ids: string[] | null;
  readonly rate_limit_per_minute: number;
  readonly enabled: boolean;
  /** system prompt of the runs (provisioned inbound endpoints set it); null = the agent's */
  readonly system_prompt: string | null;
  readonly description: string | null;
  /** `inbound_webhook`: provisioned through /inbound-webhooks (the `service_webhook` form) */
  readonly origin: 'task' | 'inbound_webhook';
  /** the last schedule occurrence fired (ISO): a restart never fires it again */
  readonly last_fired_at: string | null;
  readonly created_by: string;
}

export type TaskRunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One fire of a task; its id is the agent run's id (the transcript is that run's). */
export interface TaskRunDoc extends StoredFields {
  readonly task_id: string;
  readonly status: TaskRunStatus;
  /** why it ended when not `succeeded`: `queue_full`, `cancelled`, `task_disabled`, the agent run's reason ... */
  readonly reason: string | null;
  readonly error_message: string | null;
  readonly origin: TriggerOrigin;
  readonly delivery_id: string | null;
  /** the delivery this run replays */
  readonly replay_of: string | null;
  /** the resolved input: `instruction` plus the other keys */
  readonly input: Record<string, unknown>;
  readonly cost_usd: number;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  /** policy decisions on the run's tool calls (feature `policies`); absent when none was made */
  readonly policy_audit?: PolicyAuditEntry[];
}

/** A policy decision as the task run's record shows it (the full entry is in the decision log). */
export interface PolicyAuditEntry {
  readonly decision_id: string;
  readonly revision: string;
  readonly tool: string;
  readonly result: 'allow' | 'deny';
  readonly messages: string[];
  readonly at: string;
}

export type VerificationResult = 'valid' | 'valid_previous_secret' | 'skipped' | 'missing' | 'invalid' | 'stale_timestamp';

/** One hit on `/hooks/:trigger_id`, kept WEBHOOK_RETENTION_DAYS. */
export interface InboundDeliveryDoc extends StoredFields {
  readonly task_id: string;
  /** the sender's own delivery id (X-GitHub-Delivery, webhook-id ...), deduplicated per task */
  readonly sender_delivery_id?: string;
  readonly headers: Record<string, string>;
  /** the exact bytes received, base64; empty when the delivery failed verification (the body is not kept) */
  readonly body_base64: string;
  readonly size_bytes: number;
  /** SHA-256 (hex) of the body, set only when the body was not kept */
  readonly body_sha256?: string;
  readonly verification: VerificationResult;
  /** `accepted` started (or queued) a run; `rejected` did not */
  readonly status: 'accepted' | 'rejected';
  readonly error: string | null;
  readonly run_id: string | null;
  readonly received_at: string;
}
