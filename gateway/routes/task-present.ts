/**
 * How /tasks presents its documents: a task (its trigger as the sender
 * configures it, the secret masked unless just issued), a run with its
 * transcript, artifacts and policy audit, an inbound delivery.
 */
import type { AgentRunEventDoc } from '../../domains/tasks/run-service.js';
import { DEFAULT_TIMEZONE } from '../../domains/tasks/schedule.js';
import type { FileInfo } from '../../runtime/files/store.js';
import { MASKED_SECRET } from '../../domains/tasks/secrets.js';
import { verifierOf } from '../../domains/tasks/signatures/index.js';
import type { InboundDeliveryDoc, TaskDoc, TaskRunDoc } from '../../domains/tasks/types.js';

/** The absolute URL of a trigger; `baseUrl` from publicBaseUrl (gateway/public-url.ts). */
export const hookUrl = (baseUrl: string, triggerId: string): string => `${baseUrl}/api/v1/hooks/${triggerId}`;

/** `secret`: the plaintext of a generated secret, only in the answers to create and rotate. */
export function presentTask(task: TaskDoc, baseUrl: string, secret?: string) {
  const triggerView: Record<string, unknown> = { kind: task.trigger_kind };
  if (task.trigger_kind === 'schedule') {
    triggerView['cron'] = task.cron;
    triggerView['timezone'] = task.timezone ?? DEFAULT_TIMEZONE;
  }
  if (task.trigger_kind === 'lifecycle') triggerView['events'] = task.events;
  if (task.trigger_kind === 'webhook' && task.trigger_id !== undefined) {
    const scheme = task.signature_scheme ?? 'service';
    triggerView['url'] = hookUrl(baseUrl, task.trigger_id);
    triggerView['webhook_url'] = triggerView['url'];
    triggerView['secret'] = secret ?? MASKED_SECRET;
    triggerView['signature_scheme'] = scheme;
    triggerView['webhook_signature'] = verifierOf(scheme).setup({ requireTimestamp: task.require_timestamp, toleranceSecs: task.timestamp_tolerance_secs });
    triggerView['verify_signature'] = task.verify_signature;
    triggerView['require_timestamp'] = task.require_timestamp;
    triggerView['timestamp_tolerance_secs'] = task.timestamp_tolerance_secs;
    triggerView['previous_secret_expires_at'] = task.previous_secret_expires_at;
  }
  return {
    id: task.id,
    name: task.name,
    agent: task.agent,
    realm: task.realm,
    trigger: triggerView,
    input_template: task.input_template,
    input: task.input,
    approval_defaults: { write: task.approval_write },
    cost_cap_usd_per_day: task.cost_cap_usd_per_day,
    max_concurrent_runs: task.max_concurrent_runs,
    gateway: task.gateway ?? null,
    enabled_source_ids: task.enabled_source_ids,
    webhook: { rate_limit_per_minute: task.rate_limit_per_minute },
    enabled: task.enabled,
    system_prompt: task.system_prompt,
    description: task.description,
    last_fired_at: task.last_fired_at,
    created_at: task.created_at,
    updated_at: task.updated_at,
  };
}

export const presentDelivery = (delivery: InboundDeliveryDoc) => ({
  id: delivery.id,
  task_id: delivery.task_id,
  sender_delivery_id: delivery.sender_delivery_id ?? null,
  headers: delivery.headers,
  body_base64: delivery.body_base64,
  size_bytes: delivery.size_bytes,
  body_sha256: delivery.body_sha256 ?? null,
  verification: delivery.verification,
  status: delivery.status,
  error: delivery.error,
  run_id: delivery.run_id,
  received_at: delivery.received_at,
  created_at: delivery.created_at,
  updated_at: delivery.updated_at,
});

/** Transcript entries worth reading afterwards (text deltas are folded into the assistant messages). */
const TRANSCRIPT_TYPES = new Set(['message', 'tool_call_start', 'tool_result', 'approval_required', 'approval_decision', 'error', 'message_end']);

export function presentRun(run: TaskRunDoc, events: readonly AgentRunEventDoc[], artifacts: readonly FileInfo[]) {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  return {
    id: run.id,
    task_id: run.task_id,
    status: run.status,
    reason: run.reason,
    error_message: run.error_message,
    origin: run.origin,
    delivery_id: run.delivery_id,
    replay_of: run.replay_of,
    input: run.input,
    cost_usd: run.cost_usd,
    transcript: sorted
      .filter((event) => TRANSCRIPT_TYPES.has(event.type))
      .map((event) => ({ seq: event.seq, type: event.type, data: event.data, at: event.at })),
    artifacts: artifacts.map((file) => ({ path: file.path, size: file.size, content_type: file.content_type, modified_at: file.modified_at })),
    // the decisions taken during the run about its tool calls (approvals asked, granted, denied, timed out)
    // and the policy decisions on them (feature `policies`), in time order
    policy_audit: [
      ...sorted
        .filter((event) => event.type === 'approval_required' || event.type === 'approval_decision')
        .map((event) => ({ type: event.type, approval_id: event.approval_id, at: event.at, ...event.data })),
      ...(run.policy_audit ?? []).map((entry) => ({ type: 'policy_decision', ...entry })),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)),
    started_at: run.started_at,
    finished_at: run.finished_at,
    created_at: run.created_at,
    updated_at: run.updated_at,
  };
}
