/**
 * The zod schemas of /tasks: request bodies, params and queries, and the
 * answers (they document the routes in /openapi.json).
 */
import { z } from 'zod';
import { PLATFORM_EVENT_TYPES } from '../../runtime/events.js';
import { cronError, timezoneError } from '../../domains/tasks/schedule.js';
import { SIGNATURE_SCHEMES } from '../../domains/tasks/signatures/index.js';
import { TRIGGER_KINDS } from '../../domains/tasks/types.js';
import { decimalInteger } from '../pagination.js';
import { storedSchema } from '../resource.js';
import { safeName } from '../safe-text.js';

const name = safeName(z.string().trim().min(1, { message: 'name must not be empty' }).max(200, { message: 'name is at most 200 characters' }));
const scheduleTrigger = z.strictObject({
  kind: z.literal('schedule'),
  cron: z
    .string()
    .max(200)
    .superRefine((value, ctx) => {
      const error = cronError(value);
      if (error !== null) ctx.addIssue({ code: 'custom', message: `invalid cron "${value}": ${error}` });
    }),
  /** IANA zone the cron is read in; default UTC */
  timezone: z
    .string()
    .max(64)
    .superRefine((value, ctx) => {
      const error = timezoneError(value);
      if (error !== null) ctx.addIssue({ code: 'custom', message: error });
    })
    .optional(),
});
const webhookTrigger = z.strictObject({
  kind: z.literal('webhook'),
  verify_signature: z.boolean().optional(),
  /** opt-in replay protection: X-Service-Timestamp is signed with the body and must be within the tolerance */
  require_timestamp: z.boolean().optional(),
  timestamp_tolerance_secs: z.number().int().min(1).max(86_400).optional(),
  /** how deliveries are checked: the service's header (default) or a sender's own scheme */
  signature_scheme: z.enum(SIGNATURE_SCHEMES, { message: `trigger.signature_scheme is one of ${SIGNATURE_SCHEMES.join(', ')}` }).optional(),
  /** write-only: the sender's secret (vercel, slack: required; github, standard_webhooks, token: optional), sealed, masked on read */
  secret: z.string().min(1).max(512).optional(),
});
const lifecycleTrigger = z.strictObject({
  kind: z.literal('lifecycle'),
  events: z
    .array(z.enum(PLATFORM_EVENT_TYPES, { message: `events are among ${PLATFORM_EVENT_TYPES.join(', ')}` }))
    .min(1)
    .max(PLATFORM_EVENT_TYPES.length),
});
const trigger = z.discriminatedUnion('kind', [scheduleTrigger, webhookTrigger, lifecycleTrigger], {
  message: 'trigger.kind is "schedule", "webhook" or "lifecycle"',
});

const taskFields = {
  agent: z.string().min(1).max(200).nullable().optional(),
  realm: z.string().min(1).max(100).nullable().optional(),
  input_template: z.record(z.string(), z.unknown()).nullable().optional(),
  input: z.record(z.string(), z.unknown()).nullable().optional(),
  approval_defaults: z.strictObject({ write: z.enum(['allow', 'ask'], { message: 'approval_defaults.write is "allow" or "ask"' }) }).optional(),
  cost_cap_usd_per_day: z.number().min(0).max(1_000_000).nullable().optional(),
  max_concurrent_runs: z.number().int().min(1).max(100).optional(),
  gateway: z.string().min(1).max(100).nullable().optional().describe('a gateway (id, name or `default`) the runs are dispatched to instead of a local agent'),
  enabled_source_ids: z.array(z.string().min(1).max(100)).max(500).nullable().optional(),
  webhook: z.strictObject({ rate_limit_per_minute: z.number().int().min(1).max(1_000_000) }).optional(),
  enabled: z.boolean().optional(),
  system_prompt: z.string().max(20_000).nullable().optional(),
  description: z.string().max(2000).nullable().optional(),
};
export const taskCreate = z.strictObject({ name, trigger, ...taskFields });
export const taskPatch = z.strictObject({ name: name.optional(), trigger: trigger.optional(), ...taskFields });

export const runParams = z.object({ id: z.string().min(1).max(100), run_id: z.string().min(1).max(100) });
export const approvalParams = runParams.extend({ approval_id: z.string().min(1).max(100) });
export const eventsQuery = z.object({ last_event_id: decimalInteger('last_event_id', 0, Number.MAX_SAFE_INTEGER).optional() });

export const taskSchema = z.object({
  ...storedSchema,
  name: z.string(),
  agent: z.string().nullable(),
  realm: z.string().nullable(),
  trigger: z.object({
    kind: z.enum(TRIGGER_KINDS),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    events: z.array(z.string()).optional(),
    url: z.string().optional(),
    /** the same absolute URL (PUBLIC_URL based) */
    webhook_url: z.string().optional(),
    secret: z.string().optional(),
    signature_scheme: z.enum(SIGNATURE_SCHEMES).optional(),
    /** what to configure on the sender */
    webhook_signature: z
      .object({
        scheme: z.enum(SIGNATURE_SCHEMES),
        header: z.string(),
        headers: z.array(z.string()),
        algorithm: z.string(),
        format: z.string(),
        secret_source: z.enum(['service', 'sender', 'service_or_sender']),
        timestamp_tolerance_secs: z.number().int().optional(),
      })
      .optional(),
    verify_signature: z.boolean().optional(),
    require_timestamp: z.boolean().optional(),
    timestamp_tolerance_secs: z.number().optional(),
    previous_secret_expires_at: z.string().nullable().optional(),
  }),
  input_template: z.record(z.string(), z.unknown()).nullable(),
  input: z.record(z.string(), z.unknown()).nullable(),
  approval_defaults: z.object({ write: z.enum(['allow', 'ask']) }),
  cost_cap_usd_per_day: z.number().nullable(),
  max_concurrent_runs: z.number().int(),
  gateway: z.string().nullable(),
  enabled_source_ids: z.array(z.string()).nullable(),
  webhook: z.object({ rate_limit_per_minute: z.number().int() }),
  enabled: z.boolean(),
  system_prompt: z.string().nullable(),
  description: z.string().nullable(),
  last_fired_at: z.string().nullable(),
});
/** GET /tasks/:id also shows its actor: state, running and pending fires (null while no actor runs it) */
export const taskWithRuntimeSchema = taskSchema.extend({
  runtime: z.object({ state: z.string(), running: z.number().int(), pending: z.number().int(), next_fire_at: z.string().nullable() }).nullable(),
});
export const runSchema = z.object({
  ...storedSchema,
  task_id: z.string(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
  reason: z.string().nullable(),
  error_message: z.string().nullable(),
  origin: z.string(),
  delivery_id: z.string().nullable(),
  replay_of: z.string().nullable(),
  input: z.record(z.string(), z.unknown()),
  cost_usd: z.number(),
  transcript: z.array(z.object({ seq: z.number().int(), type: z.string(), data: z.record(z.string(), z.unknown()), at: z.string() })),
  /** the files the run wrote (`files.write_artifact`), under `artifacts/<run id>/`; download with GET /files/content?path= */
  artifacts: z.array(z.object({ path: z.string(), size: z.number().int(), content_type: z.string(), modified_at: z.string() })),
  policy_audit: z.array(z.record(z.string(), z.unknown())),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export const deliverySchema = z.object({
  ...storedSchema,
  task_id: z.string(),
  sender_delivery_id: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  body_base64: z.string(),
  size_bytes: z.number().int(),
  body_sha256: z.string().nullable(),
  verification: z.string(),
  status: z.enum(['accepted', 'rejected']),
  error: z.string().nullable(),
  run_id: z.string().nullable(),
  received_at: z.string(),
});
