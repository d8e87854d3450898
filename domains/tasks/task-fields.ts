/**
 * A task's stored fields from a validated create or patch body: the rules a
 * body must meet beyond its schema (a template or a literal input, not both;
 * no unsigned webhooks in production) and the defaults a new task starts with.
 */
import { ServiceError } from '../../runtime/errors.js';
import type { PlatformEventType } from '../../runtime/events.js';
import { newId } from '../../runtime/ids.js';
import type { NewDoc } from '../../runtime/store/types.js';
import { newTriggerId, type SecretBox } from './secrets.js';
import type { SignatureScheme } from './signatures/types.js';
import { triggerSecret } from './signatures/trigger-secret.js';
import { DEFAULT_TIMEZONE } from './schedule.js';
import { TemplateError, validateInputTemplate } from './template.js';
import { TASK_DEFAULTS, type TaskDoc } from './types.js';

/** A trigger as the route's schema has validated it. */
export type TriggerInput =
  | { readonly kind: 'schedule'; readonly cron: string; readonly timezone?: string | undefined }
  | {
      readonly kind: 'webhook';
      readonly verify_signature?: boolean | undefined;
      readonly require_timestamp?: boolean | undefined;
      readonly timestamp_tolerance_secs?: number | undefined;
      readonly signature_scheme?: SignatureScheme | undefined;
      readonly secret?: string | undefined;
    }
  | { readonly kind: 'lifecycle'; readonly events: readonly PlatformEventType[] };

/** A create or patch body as the route's schema has validated it (a patch leaves out what it keeps). */
export interface TaskInput {
  readonly name?: string | undefined;
  readonly trigger?: TriggerInput | undefined;
  readonly agent?: string | null | undefined;
  readonly realm?: string | null | undefined;
  readonly input_template?: Record<string, unknown> | null | undefined;
  readonly input?: Record<string, unknown> | null | undefined;
  readonly approval_defaults?: { readonly write: 'allow' | 'ask' } | undefined;
  readonly cost_cap_usd_per_day?: number | null | undefined;
  readonly max_concurrent_runs?: number | undefined;
  readonly gateway?: string | null | undefined;
  readonly enabled_source_ids?: string[] | null | undefined;
  readonly webhook?: { readonly rate_limit_per_minute: number } | undefined;
  readonly enabled?: boolean | undefined;
  readonly system_prompt?: string | null | undefined;
  readonly description?: string | null | undefined;
}

/** The stored fields of a validated create (or of a patch merged onto the existing task). */
export type TaskFields = { -readonly [K in keyof Omit<TaskDoc, 'id' | 'created_at' | 'updated_at'>]?: TaskDoc[K] };

/** The fields a body sets; throws 400 `validation_error` for what its schema cannot tell. */
export function taskFieldsOf(body: TaskInput, existing: TaskDoc | null, production: boolean): TaskFields {
  const template = body.input_template === undefined ? (existing?.input_template ?? null) : body.input_template;
  const literal = body.input === undefined ? (existing?.input ?? null) : body.input;
  if (body.input_template != null && body.input != null) {
    throw new ServiceError('validation_error', 'invalid body: give input_template or input, not both', {
      issues: [{ path: 'input_template', message: 'input_template and input are alternatives' }],
    });
  }
  if (body.input_template != null) {
    try {
      validateInputTemplate(body.input_template);
    } catch (error) {
      if (error instanceof TemplateError) {
        throw new ServiceError('validation_error', `invalid body: ${error.message}`, {
          issues: [{ path: `input_template.${error.key}`, message: error.message }],
        });
      }
      throw error;
    }
  }
  const out: TaskFields = {};
  if (body.name !== undefined) out.name = body.name;
  if (body.agent !== undefined) out.agent = body.agent;
  if (body.realm !== undefined) out.realm = body.realm;
  // one replaces the other: a patch giving input clears the template and back
  if (body.input_template !== undefined || body.input !== undefined) {
    out.input_template = body.input != null ? null : template;
    out.input = body.input_template != null ? null : literal;
  }
  if (body.approval_defaults !== undefined) out.approval_write = body.approval_defaults.write;
  if (body.cost_cap_usd_per_day !== undefined) out.cost_cap_usd_per_day = body.cost_cap_usd_per_day;
  if (body.max_concurrent_runs !== undefined) out.max_concurrent_runs = body.max_concurrent_runs;
  if (body.gateway !== undefined) out.gateway = body.gateway;
  if (body.enabled_source_ids !== undefined) out.enabled_source_ids = body.enabled_source_ids;
  if (body.webhook !== undefined) out.rate_limit_per_minute = body.webhook.rate_limit_per_minute;
  if (body.enabled !== undefined) out.enabled = body.enabled;
  if (body.system_prompt !== undefined) out.system_prompt = body.system_prompt;
  if (body.description !== undefined) out.description = body.description;
  if (body.trigger !== undefined) Object.assign(out, triggerFields(body.trigger, production));
  return out;
}

function triggerFields(value: TriggerInput, production: boolean): Partial<TaskDoc> {
  switch (value.kind) {
    case 'schedule':
      return { trigger_kind: 'schedule', cron: value.cron.trim().replace(/\s+/g, ' '), timezone: value.timezone ?? DEFAULT_TIMEZONE };
    case 'lifecycle':
      return { trigger_kind: 'lifecycle', events: [...new Set(value.events)] };
    case 'webhook':
      if (value.verify_signature === false && production) {
        throw new ServiceError('validation_error', 'invalid body: trigger.verify_signature: false is refused when NODE_ENV=production', {
          issues: [{ path: 'trigger.verify_signature', message: 'signatures cannot be switched off in production' }],
        });
      }
      return {
        trigger_kind: 'webhook',
        ...(value.verify_signature === undefined ? {} : { verify_signature: value.verify_signature }),
        ...(value.require_timestamp === undefined ? {} : { require_timestamp: value.require_timestamp }),
        ...(value.timestamp_tolerance_secs === undefined ? {} : { timestamp_tolerance_secs: value.timestamp_tolerance_secs }),
        ...(value.signature_scheme === undefined ? {} : { signature_scheme: value.signature_scheme }),
      };
  }
}

/**
 * A new task: the defaults, then what the body set (`fields`, from
 * taskFieldsOf). A webhook task gets its trigger id and its secret, sealed;
 * `secret` is its plaintext when the service generated it (shown only in
 * the answer to the create).
 */
export function newTaskDoc(
  body: { readonly name: string; readonly trigger: TriggerInput },
  fields: TaskFields,
  createdBy: string,
  secrets: SecretBox,
): { readonly doc: NewDoc<TaskDoc>; readonly secret: string | undefined } {
  const issued = body.trigger.kind === 'webhook' ? triggerSecret(body.trigger, null) : null;
  const secret = issued?.secret ?? null;
  const id = newId('tsk');
  const doc: NewDoc<TaskDoc> = {
    id,
    name: body.name,
    agent: null,
    realm: null,
    cron: null,
    events: null,
    ...(secret === null ? {} : { trigger_id: newTriggerId() }),
    secret_sealed: secret === null ? null : secrets.seal(id, secret),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    verify_signature: true,
    require_timestamp: false,
    timestamp_tolerance_secs: TASK_DEFAULTS.timestamp_tolerance_secs,
    input_template: null,
    input: null,
    approval_write: 'ask',
    cost_cap_usd_per_day: null,
    max_concurrent_runs: TASK_DEFAULTS.max_concurrent_runs,
    enabled_source_ids: null,
    rate_limit_per_minute: TASK_DEFAULTS.rate_limit_per_minute,
    enabled: true,
    system_prompt: null,
    description: null,
    origin: 'task',
    last_fired_at: null,
    created_by: createdBy,
    trigger_kind: body.trigger.kind,
    ...fields,
  };
  return { doc, secret: issued?.generated === true ? issued.secret : undefined };
}
