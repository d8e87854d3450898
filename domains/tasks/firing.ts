/**
 * Firing a task from outside its own trigger: webhook samples, delivery
 * replays and manual runs go through this one entry point.
 */

export type TriggerOrigin = 'schedule' | 'webhook' | 'lifecycle' | 'replay' | 'sample' | 'manual';

/** What a fire hands the task: the template addresses it as `trigger.*`. */
export interface TriggerInput {
  readonly origin: TriggerOrigin;
  /** parsed body (JSON, form fields or multipart fields), or null */
  readonly body: unknown;
  /** lowercased request headers, when the fire came over HTTP */
  readonly headers: Readonly<Record<string, string>>;
  readonly delivery_id: string | null;
}

export interface FireResult {
  readonly run_id: string;
  /** `pending` when the task is at max_concurrent_runs and the fire waits its turn */
  readonly status: 'pending' | 'running';
}

export interface TaskFiring {
  /**
   * Throws ServiceError `not_found` for an unknown task of this organization,
   * `conflict` for a disabled one, `rate_limited` (Retry-After 60) when the
   * task's pending queue is full (that fire is recorded as a failed run,
   * reason `queue_full`), `service_unavailable` during shutdown.
   */
  fire(orgId: string, taskId: string, trigger: TriggerInput): Promise<FireResult>;
}
