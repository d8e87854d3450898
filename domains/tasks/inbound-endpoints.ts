/**
 * Provisioned inbound webhook endpoints (`/inbound-webhooks`): a webhook task
 * whose instruction is the payload template, served at /hooks/:trigger_id; and
 * the stored inbound deliveries. The secret is shown once, at creation.
 */
import type { Collections } from '../collections.js';
import type { TaskRuntime } from './index.js';
import { newTriggerId, newWebhookSecret } from './secrets.js';
import { TemplateError, validateInputTemplate } from './template.js';
import { TASK_DEFAULTS, type InboundDeliveryDoc, type TaskDoc } from './types.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { getOr404, unique } from '../../runtime/store/documents.js';
import type { ListOptions, OrgId, Page } from '../../runtime/store/types.js';

/** what a provisioned endpoint tells its agent when no payload template is given */
export const DEFAULT_PAYLOAD_TEMPLATE = 'A webhook arrived. Its payload:\n{{trigger.body}}';

export interface InboundEndpointCreate {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly payload_template?: string | null | undefined;
  readonly system_prompt?: string | null | undefined;
}

export type InboundEndpointPatch = Partial<InboundEndpointCreate>;

/** a payload template the task runtime can render, else 400 naming the problem */
function checkTemplate(template: string): void {
  try {
    validateInputTemplate({ instruction: template });
  } catch (error) {
    if (error instanceof TemplateError) {
      throw new ServiceError('validation_error', `invalid body: payload_template: ${error.message}`, {
        issues: [{ path: 'payload_template', message: error.message }],
      });
    }
    throw error;
  }
}

export class InboundEndpoints {
  constructor(
    private readonly collections: Pick<Collections, 'tasks' | 'inboundDeliveries'>,
    private readonly runtime: Pick<TaskRuntime, 'inbound' | 'service' | 'secrets'>,
  ) {}

  /** the endpoint's task and its secret (shown only now) */
  async create(org: OrgId, createdBy: string, body: InboundEndpointCreate): Promise<{ readonly task: TaskDoc; readonly secret: string }> {
    const template = body.payload_template ?? DEFAULT_PAYLOAD_TEMPLATE;
    checkTemplate(template);
    const id = newId('tsk');
    const secret = newWebhookSecret();
    const task = await unique('task', () =>
      this.collections.tasks.insert(org, {
        id,
        name: body.name,
        agent: null,
        realm: null,
        trigger_kind: 'webhook',
        cron: null,
        events: null,
        trigger_id: newTriggerId(),
        secret_sealed: this.runtime.secrets.seal(id, secret),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        verify_signature: true,
        require_timestamp: false,
        timestamp_tolerance_secs: TASK_DEFAULTS.timestamp_tolerance_secs,
        input_template: { instruction: template },
        input: null,
        approval_write: 'ask',
        cost_cap_usd_per_day: null,
        max_concurrent_runs: TASK_DEFAULTS.max_concurrent_runs,
        enabled_source_ids: null,
        rate_limit_per_minute: TASK_DEFAULTS.rate_limit_per_minute,
        enabled: true,
        system_prompt: body.system_prompt ?? null,
        description: body.description ?? null,
        origin: 'inbound_webhook',
        last_fired_at: null,
        created_by: createdBy,
      }),
    );
    this.runtime.service.taskChanged(org, task);
    return { task, secret };
  }

  /** one page of the provisioned endpoints (`options` from the route's query) */
  list(org: OrgId, options: ListOptions): Promise<Page<TaskDoc>> {
    return this.collections.tasks.list(org, { ...options, filter: { ...options.filter, origin: 'inbound_webhook' } });
  }

  /** a task that is not a provisioned endpoint is absent here */
  async get(org: OrgId, id: string): Promise<TaskDoc> {
    const task = await this.collections.tasks.get(org, id);
    if (!task || task.origin !== 'inbound_webhook') throw new ServiceError('not_found', `inbound webhook ${id} not found`);
    return task;
  }

  /** name, description, payload template and system prompt in place; the slug, URL and secret stay (rotation is delete and recreate) */
  async update(org: OrgId, id: string, body: InboundEndpointPatch): Promise<TaskDoc> {
    const task = await this.get(org, id);
    const changes: { -readonly [K in keyof TaskDoc]?: TaskDoc[K] } = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.description !== undefined) changes.description = body.description;
    if (body.system_prompt !== undefined) changes.system_prompt = body.system_prompt;
    if (body.payload_template !== undefined) {
      const template = body.payload_template ?? DEFAULT_PAYLOAD_TEMPLATE;
      checkTemplate(template);
      changes.input_template = { instruction: template };
    }
    const updated = await unique('task', () => this.collections.tasks.update(org, task.id, changes));
    if (!updated) throw new ServiceError('not_found', `inbound webhook ${id} not found`);
    // the intake caches what a trigger resolves to: the next delivery must render the new template
    this.runtime.inbound.forget(updated);
    this.runtime.service.taskChanged(org, updated);
    return updated;
  }

  /** its URL answers 404 from now on */
  async delete(org: OrgId, id: string): Promise<void> {
    const task = await this.get(org, id);
    await this.collections.tasks.delete(org, task.id);
    this.runtime.inbound.forget(task);
    this.runtime.service.taskDeleted(task.id);
  }

  delivery(org: OrgId, id: string): Promise<InboundDeliveryDoc> {
    return getOr404(this.collections.inboundDeliveries, org, id, 'delivery');
  }
}
