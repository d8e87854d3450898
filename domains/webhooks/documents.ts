/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

/** An outbound webhook (`/webhooks`): secrets are sealed at rest (domains/webhooks/secrets.ts), never stored plain. */
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

type WebhookDeliveryStatus = 'queued' | 'in_flight' | 'delivered' | 'failed';

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
