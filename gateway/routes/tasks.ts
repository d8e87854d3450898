/**
 * /tasks: automatic agent runs started by a schedule (five-field cron, UTC),
 * a signed webhook or a platform event; their runs (history, live events,
 * cancel, approvals) and their inbound deliveries. The task runtime
 * (runtime/tasks/) owns the actors; these routes parse, call it, present.
 */
import { z } from 'zod';
import type { AgentRunEventDoc } from '../../runtime/collections.js';
import { ServiceError, conflict } from '../../runtime/errors.js';
import { PLATFORM_EVENT_TYPES } from '../../runtime/events.js';
import { listArtifacts } from '../../runtime/files/artifacts.js';
import type { FileInfo } from '../../runtime/files/store.js';
import { newId } from '../../runtime/ids.js';
import { assertReferences } from '../../runtime/references.js';
import { cronError } from '../../runtime/tasks/schedule.js';
import { MASKED_SECRET, newTriggerId, newWebhookSecret } from '../../runtime/tasks/secrets.js';
import { SIGNATURE_SCHEMES, verifierOf } from '../../runtime/tasks/signatures/index.js';
import { triggerSecret } from '../../runtime/tasks/signatures/trigger-secret.js';
import { TemplateError, validateInputTemplate } from '../../runtime/tasks/template.js';
import { TASK_DEFAULTS, TRIGGER_KINDS, type InboundDeliveryDoc, type TaskDoc, type TaskRunDoc } from '../../runtime/tasks/types.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { HttpRequest, HttpResponse } from '../http.js';
import { publicBaseUrl } from '../public-url.js';
import { decimalInteger, listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { getOr404, idParams, storedSchema, unique } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { liveStream, pipeFeed, RECONNECT_MS, SSE_HEADERS, storedStream } from '../sse.js';

/** how long the replaced secret keeps verifying after a rotation, unless the caller says otherwise */
const DEFAULT_ROTATION_OVERLAP_SECS = 3600;

const name = safeName(z.string().trim().min(1, { message: 'name must not be empty' }).max(200, { message: 'name is at most 200 characters' }));
const scheduleTrigger = z.strictObject({
  kind: z.literal('schedule'),
  cron: z.string().max(200).superRefine((value, ctx) => {
    const error = cronError(value);
    if (error !== null) ctx.addIssue({ code: 'custom', message: `invalid cron "${value}": ${error}` });
  }),
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
  events: z.array(z.enum(PLATFORM_EVENT_TYPES, { message: `events are among ${PLATFORM_EVENT_TYPES.join(', ')}` })).min(1).max(PLATFORM_EVENT_TYPES.length),
});
const trigger = z.discriminatedUnion('kind', [scheduleTrigger, webhookTrigger, lifecycleTrigger], {
  message: 'trigger.kind is "schedule", "webhook" or "lifecycle"',
});
type TriggerBody = z.output<typeof trigger>;

const taskFields = {
  agent: z.string().min(1).max(200).nullable().optional(),
  realm: z.string().min(1).max(100).nullable().optional(),
  input_template: z.record(z.string(), z.unknown()).nullable().optional(),
  input: z.record(z.string(), z.unknown()).nullable().optional(),
  approval_defaults: z.strictObject({ write: z.enum(['allow', 'ask'], { message: 'approval_defaults.write is "allow" or "ask"' }) }).optional(),
  cost_cap_usd_per_day: z.number().min(0).max(1_000_000).nullable().optional(),
  max_concurrent_runs: z.number().int().min(1).max(100).optional(),
  enabled_source_ids: z.array(z.string().min(1).max(100)).max(500).nullable().optional(),
  webhook: z.strictObject({ rate_limit_per_minute: z.number().int().min(1).max(1_000_000) }).optional(),
  enabled: z.boolean().optional(),
  system_prompt: z.string().max(20_000).nullable().optional(),
  description: z.string().max(2000).nullable().optional(),
};
const taskCreate = z.strictObject({ name, trigger, ...taskFields });
const taskPatch = z.strictObject({ name: name.optional(), trigger: trigger.optional(), ...taskFields });

const runParams = z.object({ id: z.string().min(1).max(100), run_id: z.string().min(1).max(100) });
const approvalParams = runParams.extend({ approval_id: z.string().min(1).max(100) });
const eventsQuery = z.object({ last_event_id: decimalInteger('last_event_id', 0, Number.MAX_SAFE_INTEGER).optional() });

const taskSchema = z.object({
  ...storedSchema,
  name: z.string(),
  agent: z.string().nullable(),
  realm: z.string().nullable(),
  trigger: z.object({
    kind: z.enum(TRIGGER_KINDS),
    cron: z.string().optional(),
    events: z.array(z.string()).optional(),
    url: z.string().optional(),
    /** the same absolute URL (PUBLIC_URL based) */
    webhook_url: z.string().optional(),
    secret: z.string().optional(),
    signature_scheme: z.enum(SIGNATURE_SCHEMES).optional(),
    /** what to configure on the sender */
    webhook_signature: z.object({
      scheme: z.enum(SIGNATURE_SCHEMES),
      header: z.string(),
      headers: z.array(z.string()),
      algorithm: z.string(),
      format: z.string(),
      secret_source: z.enum(['service', 'sender', 'service_or_sender']),
      timestamp_tolerance_secs: z.number().int().optional(),
    }).optional(),
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
  enabled_source_ids: z.array(z.string()).nullable(),
  webhook: z.object({ rate_limit_per_minute: z.number().int() }),
  enabled: z.boolean(),
  system_prompt: z.string().nullable(),
  description: z.string().nullable(),
  last_fired_at: z.string().nullable(),
});
/** GET /tasks/:id also shows its actor: state, running and pending fires (null while no actor runs it) */
const taskWithRuntimeSchema = taskSchema.extend({
  runtime: z.object({ state: z.string(), running: z.number().int(), pending: z.number().int(), next_fire_at: z.string().nullable() }).nullable(),
});
const runSchema = z.object({
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

/** The absolute URL of a trigger; `baseUrl` from publicBaseUrl (gateway/public-url.ts). */
export const hookUrl = (baseUrl: string, triggerId: string): string => `${baseUrl}/api/v1/hooks/${triggerId}`;

/** `secret`: the plaintext of a generated secret, only in the answers to create and rotate. */
export function presentTask(task: TaskDoc, baseUrl: string, secret?: string) {
  const triggerView: Record<string, unknown> = { kind: task.trigger_kind };
  if (task.trigger_kind === 'schedule') triggerView['cron'] = task.cron;
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

function presentRun(run: TaskRunDoc, events: readonly AgentRunEventDoc[], artifacts: readonly FileInfo[]) {
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
    transcript: sorted.filter((event) => TRANSCRIPT_TYPES.has(event.type)).map((event) => ({ seq: event.seq, type: event.type, data: event.data, at: event.at })),
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

/** The stored fields of a validated create (or of a patch merged onto the existing task). */
type TaskFields = { -readonly [K in keyof Omit<TaskDoc, 'id' | 'created_at' | 'updated_at'>]?: TaskDoc[K] };

function taskFieldsOf(body: z.output<typeof taskPatch>, existing: TaskDoc | null, production: boolean): TaskFields {
  const template = body.input_template === undefined ? existing?.input_template ?? null : body.input_template;
  const literal = body.input === undefined ? existing?.input ?? null : body.input;
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
  if (body.enabled_source_ids !== undefined) out.enabled_source_ids = body.enabled_source_ids;
  if (body.webhook !== undefined) out.rate_limit_per_minute = body.webhook.rate_limit_per_minute;
  if (body.enabled !== undefined) out.enabled = body.enabled;
  if (body.system_prompt !== undefined) out.system_prompt = body.system_prompt;
  if (body.description !== undefined) out.description = body.description;
  if (body.trigger !== undefined) Object.assign(out, triggerFields(body.trigger, production));
  return out;
}

function triggerFields(value: TriggerBody, production: boolean): Partial<TaskDoc> {
  switch (value.kind) {
    case 'schedule':
      return { trigger_kind: 'schedule', cron: value.cron.trim().replace(/\s+/g, ' ') };
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

export function taskRoutes({ collections, config, agentRuntime, taskRuntime, files }: Services): AnyRoute[] {
  const { tasks, taskRuns, agentRunEvents, agentRuns, inboundDeliveries } = collections;
  const { service, inbound, secrets } = taskRuntime;
  const baseUrl = (request: HttpRequest): string => publicBaseUrl(config, request);

  /** the agent, realm and sources a create or patch sets must be the organization's (null keeps the default) */
  const checkReferences = (org: OrgId, body: z.output<typeof taskPatch>): Promise<unknown> =>
    assertReferences(collections, org, {
      agent: body.agent == null ? undefined : { path: 'agent', value: body.agent },
      realm: body.realm == null ? undefined : { path: 'realm', value: body.realm },
      sources: body.enabled_source_ids == null ? undefined : { path: 'enabled_source_ids', ids: body.enabled_source_ids },
    });

  const runOf = async (org: OrgId, taskId: string, runId: string): Promise<TaskRunDoc> => {
    await getOr404(tasks, org, taskId, 'task');
    const run = await taskRuns.get(org, runId);
    if (!run || run.task_id !== taskId) throw new ServiceError('not_found', `run ${runId} not found`);
    return run;
  };

  /** A pending run's stream: opened now, fed once the run starts (a run that ends without starting replays what it has). */
  const pendingStream = (runId: string, after: number): HttpResponse => ({
    status: 200,
    headers: { ...SSE_HEADERS, 'x-run-id': runId },
    body: {
      stream: (sink) => {
        sink.write(`retry: ${RECONNECT_MS}\n\n`);
        const unsubscribe = service.onStarted(runId, () => {
          const feed = agentRuntime.feed(runId);
          if (feed) pipeFeed(feed, after, sink);
          else sink.end();
        });
        sink.onClose(unsubscribe);
      },
    },
  });

  const applied = (org: OrgId, before: TaskDoc | null, after: TaskDoc): void => {
    if (before) inbound.forget(before);
    service.taskChanged(org, after);
  };

  return [
    route({
      method: 'POST', path: '/tasks', tag: 'tasks', summary: 'Create a task; a webhook task answers its trigger.url and trigger.secret (shown only now)',
      auth: 'bearer', permission: 'task:manage', body: taskCreate, response: taskSchema, status: 201, creates: true,
      handler: async ({ auth, body, request }) => {
        const fields = taskFieldsOf(body, null, config.production);
        await checkReferences(auth.orgId, body);
        const issued = body.trigger.kind === 'webhook' ? triggerSecret(body.trigger, null) : null;
        const secret = issued?.secret ?? null;
        const id = newId('tsk');
        const task = await unique('task', () =>
          tasks.insert(auth.orgId, {
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
            created_by: auth.userId,
            trigger_kind: body.trigger.kind,
            ...fields,
          }),
        );
        service.taskChanged(auth.orgId, task);
        return { status: 201, json: presentTask(task, baseUrl(request), issued?.generated === true ? issued.secret : undefined) };
      },
    }),
    route({
      method: 'GET', path: '/tasks', tag: 'tasks', summary: 'List tasks (secrets masked)', auth: 'bearer', permission: 'task:read',
      query: pageQuery, response: pageSchema(taskSchema),
      handler: async ({ auth, query, request }) => ({
        status: 200,
        json: pageEnvelope(query, await tasks.list(auth.orgId, listOptions(query)), (task) => presentTask(task, baseUrl(request))),
      }),
    }),
    route({
      method: 'GET', path: '/tasks/:id', tag: 'tasks', summary: 'A task (secret masked), with its actor state and queue',
      auth: 'bearer', permission: 'task:read', params: idParams, response: taskWithRuntimeSchema,
      handler: async ({ auth, params, request }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        return { status: 200, json: { ...presentTask(task, baseUrl(request)), runtime: service.actorView(task.id) } };
      },
    }),
    route({
      method: 'PATCH', path: '/tasks/:id', tag: 'tasks', summary: 'Change a task (partial); the trigger kind is fixed at creation',
      auth: 'bearer', permission: 'task:manage', params: idParams, body: taskPatch, response: taskSchema,
      handler: async ({ auth, params, body, request }) => {
        const existing = await getOr404(tasks, auth.orgId, params.id, 'task');
        if (body.trigger !== undefined && body.trigger.kind !== existing.trigger_kind) {
          throw new ServiceError('immutable_field', 'trigger.kind cannot be changed after creation', { field: 'trigger.kind' });
        }
        const fields = taskFieldsOf(body, existing, config.production);
        await checkReferences(auth.orgId, body);
        if (body.trigger?.kind === 'webhook') {
          const sealed = existing.secret_sealed;
          const given = triggerSecret(body.trigger, {
            scheme: existing.signature_scheme ?? 'service',
            current: () => (sealed === null ? null : secrets.open(existing.id, sealed)),
          });
          // a secret set by hand replaces the old one at once (the sender changed it already)
          if (given !== null) Object.assign(fields, { secret_sealed: secrets.seal(existing.id, given.secret), previous_secret_sealed: null, previous_secret_expires_at: null });
        }
        const updated = await unique('task', () => tasks.update(auth.orgId, existing.id, fields));
        if (!updated) throw new ServiceError('not_found', `task ${params.id} not found`);
        applied(auth.orgId, existing, updated);
        return { status: 200, json: presentTask(updated, baseUrl(request)) };
      },
    }),
    route({
      method: 'DELETE', path: '/tasks/:id', tag: 'tasks', summary: 'Delete a task: its trigger stops, pending fires are cancelled',
      auth: 'bearer', permission: 'task:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        await tasks.delete(auth.orgId, task.id);
        inbound.forget(task);
        service.taskDeleted(task.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST', path: '/tasks/:id/rotate-secret', tag: 'tasks',
      summary: 'New webhook secret (shown only now); the previous one keeps verifying for overlap_secs (default 3600)',
      auth: 'bearer', permission: 'task:manage', params: idParams,
      body: z.strictObject({ overlap_secs: z.number().int().min(0).max(604_800).optional() }).optional(), response: taskSchema,
      handler: async ({ auth, params, body, request }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        if (task.trigger_kind !== 'webhook' || task.secret_sealed === null) throw conflict('only webhook tasks have a secret', { kind: task.trigger_kind });
        const scheme = task.signature_scheme ?? 'service';
        if (verifierOf(scheme).userSecret === 'required') {
          throw conflict(`the ${scheme} sender generates this secret: set the new one with PATCH /tasks/:id {trigger: {kind: "webhook", secret}}`, { signature_scheme: scheme });
        }
        const secret = newWebhookSecret();
        const overlapMs = (body?.overlap_secs ?? DEFAULT_ROTATION_OVERLAP_SECS) * 1000;
        const updated = await tasks.update(auth.orgId, task.id, {
          secret_sealed: secrets.seal(task.id, secret),
          previous_secret_sealed: overlapMs > 0 ? task.secret_sealed : null,
          previous_secret_expires_at: overlapMs > 0 ? new Date(taskRuntime.now() + overlapMs).toISOString() : null,
        });
        if (!updated) throw new ServiceError('not_found', `task ${params.id} not found`);
        inbound.forget(updated);
        return { status: 200, json: presentTask(updated, baseUrl(request), secret) };
      },
    }),
    route({
      method: 'POST', path: '/tasks/:id/run', tag: 'tasks', summary: 'Fire the task now; `body` is what its template sees as trigger.body',
      auth: 'bearer', permission: 'task:manage', params: idParams, status: 202,
      body: z.strictObject({ body: z.unknown().optional() }).optional(),
      response: z.object({ run_id: z.string(), status: z.enum(['pending', 'running']) }),
      handler: async ({ auth, params, body }) => {
        const result = await service.fire(auth.orgId, params.id, { origin: 'manual', body: body?.body ?? null, headers: {}, delivery_id: null });
        return { status: 202, json: result };
      },
    }),
    route({
      method: 'GET', path: '/tasks/:id/runs', tag: 'tasks', summary: 'Run history, newest last: status, input, transcript, artifacts, policy audit',
      auth: 'bearer', permission: 'task:read', params: idParams, query: pageQuery, response: pageSchema(runSchema),
      handler: async ({ auth, params, query }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        const page = await taskRuns.list(auth.orgId, listOptions(query, { task_id: task.id }));
        // per run on the page, one event query and one walk of its artifact folder, all at once
        const details = await Promise.all(
          page.items.map((run) => Promise.all([agentRunEvents.findAll(auth.orgId, { run_id: run.id }), listArtifacts(files, auth.orgId, run.id)])),
        );
        const byRun = new Map(page.items.map((run, index) => [run.id, details[index]]));
        return {
          status: 200,
          json: pageEnvelope(query, page, (run) => {
            const [events, artifacts] = byRun.get(run.id) ?? [[], []];
            return presentRun(run, events, artifacts);
          }),
        };
      },
    }),
    route({
      method: 'GET', path: '/tasks/:id/runs/:run_id', tag: 'tasks', summary: 'One run with its transcript',
      auth: 'bearer', permission: 'task:read', params: runParams, response: runSchema,
      handler: async ({ auth, params }) => {
        const run = await runOf(auth.orgId, params.id, params.run_id);
        const [events, artifacts] = await Promise.all([agentRunEvents.findAll(auth.orgId, { run_id: run.id }), listArtifacts(files, auth.orgId, run.id)]);
        return { status: 200, json: presentRun(run, events, artifacts) };
      },
    }),
    route({
      method: 'GET', path: '/tasks/:id/runs/:run_id/events', tag: 'tasks',
      summary: 'Server-Sent Events of a run: live with approvals inline; a finished (or not yet started) run replays its events and closes',
      auth: 'bearer', permission: 'task:read', params: runParams, query: eventsQuery,
      handler: async ({ auth, params, query, request }) => {
        const run = await runOf(auth.orgId, params.id, params.run_id);
        const header = request.headers['last-event-id']?.trim();
        let after = query.last_event_id ?? 0;
        if (header !== undefined && header !== '') {
          if (!/^\d+$/.test(header)) throw new ServiceError('validation_error', 'invalid header: Last-Event-ID must be an event id (an integer)');
          after = Number(header);
        }
        const feed = agentRuntime.feed(run.id);
        if (feed) return liveStream(feed, after, { 'x-run-id': run.id });
        if (run.status === 'pending') return pendingStream(run.id, after);
        return storedStream(await agentRunEvents.findAll(auth.orgId, { run_id: run.id }), after);
      },
    }),
    route({
      method: 'POST', path: '/tasks/:id/runs/:run_id/cancel', tag: 'tasks',
      summary: 'Cancel a run: a pending fire leaves the queue, a running run stops after its current step',
      auth: 'bearer', permission: 'task:manage', params: runParams, status: 202,
      response: z.object({ run_id: z.string(), status: z.enum(['cancelled', 'cancelling']) }),
      handler: async ({ auth, params }) => {
        await getOr404(tasks, auth.orgId, params.id, 'task');
        const outcome = await service.cancel(auth.orgId, params.id, params.run_id);
        return { status: 202, json: { run_id: params.run_id, status: outcome === 'cancelled' ? 'cancelled' : 'cancelling' } };
      },
    }),
    route({
      method: 'POST', path: '/tasks/:id/runs/:run_id/approvals/:approval_id', tag: 'tasks', audit: { action: 'decide' },
      summary: 'Answer an approval_required event of a task run', auth: 'bearer', permission: 'task:manage', params: approvalParams,
      body: z.strictObject({ approved: z.boolean({ message: 'approved must be true or false' }) }),
      response: z.object({ approval_id: z.string(), approved: z.boolean(), decision: z.enum(['approved', 'denied']) }),
      handler: async ({ auth, params, body }) => {
        const run = await runOf(auth.orgId, params.id, params.run_id);
        const notFound = new ServiceError('not_found', `approval ${params.approval_id} not found`);
        if (agentRuntime.pendingApproval(auth.orgId, params.approval_id) === run.id) {
          if (agentRuntime.answer(auth.orgId, params.approval_id, body.approved, auth.userId) === 'accepted') {
            return { status: 200, json: { approval_id: params.approval_id, approved: body.approved, decision: body.approved ? 'approved' : 'denied' } };
          }
        }
        const events = await agentRunEvents.findAll(auth.orgId, { approval_id: params.approval_id });
        if (!events.some((event) => event.type === 'approval_required' && event.run_id === run.id)) throw notFound;
        const decided = events.find((event) => event.type === 'approval_decision');
        const agentRun = await agentRuns.get(auth.orgId, run.id);
        throw conflict('this approval is no longer waiting for an answer', {
          decision: decided ? decided.data['decision'] : null,
          run_status: agentRun?.status ?? run.status,
        });
      },
    }),
    route({
      method: 'GET', path: '/tasks/:id/deliveries', tag: 'tasks', summary: 'Inbound webhook deliveries of the task, oldest first',
      auth: 'bearer', permission: 'task:read', params: idParams, query: pageQuery, response: pageSchema(deliverySchema),
      handler: async ({ auth, params, query }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        return { status: 200, json: pageEnvelope(query, await inboundDeliveries.list(auth.orgId, listOptions(query, { task_id: task.id })), presentDelivery) };
      },
    }),
  ];
}
