/**
 * Task definitions (`/tasks`): create, read, change and delete a task, rotate
 * its webhook secret, list its stored inbound deliveries. Every save checks the
 * agent, realm and sources it names and tells the task runtime, which starts,
 * updates or stops the task's actor; the runtime (service.ts) owns firing and runs.
 */
import type { Collections } from '../collections.js';
import { assertReferences } from '../references.js';
import type { TaskRuntime } from './index.js';
import { newTaskDoc, taskFieldsOf, type TaskInput, type TriggerInput } from './task-fields.js';
import type { InboundDeliveryDoc, TaskDoc } from './types.js';
import { patchedSecret, rotatedSecret } from './webhook-secret.js';
import { ServiceError } from '../../runtime/errors.js';
import { getOr404, unique } from '../../runtime/store/documents.js';
import type { ListOptions, OrgId, Page } from '../../runtime/store/types.js';

/** a task and, when it was issued just now, its webhook secret in plaintext (shown only in this answer) */
export interface TaskWithSecret {
  readonly task: TaskDoc;
  readonly secret: string | undefined;
}

export class TaskDefinitions {
  constructor(
    private readonly collections: Pick<Collections, 'tasks' | 'inboundDeliveries' | 'agents' | 'realms' | 'channels' | 'sources'>,
    private readonly runtime: Pick<TaskRuntime, 'service' | 'inbound' | 'secrets' | 'now'>,
    /** production refuses what development allows (see taskFieldsOf) */
    private readonly production: boolean,
  ) {}

  async create(org: OrgId, createdBy: string, body: TaskInput & { readonly name: string; readonly trigger: TriggerInput }): Promise<TaskWithSecret> {
    const fields = taskFieldsOf(body, null, this.production);
    await this.checkReferences(org, body);
    const { doc, secret } = newTaskDoc(body, fields, createdBy, this.runtime.secrets);
    const task = await unique('task', () => this.collections.tasks.insert(org, doc));
    this.runtime.service.taskChanged(org, task);
    return { task, secret };
  }

  list(org: OrgId, options: ListOptions): Promise<Page<TaskDoc>> {
    return this.collections.tasks.list(org, options);
  }

  get(org: OrgId, id: string): Promise<TaskDoc> {
    return getOr404(this.collections.tasks, org, id, 'task');
  }

  /** a partial change; the trigger kind is fixed at creation */
  async update(org: OrgId, id: string, body: TaskInput): Promise<TaskDoc> {
    const existing = await this.get(org, id);
    if (body.trigger !== undefined && body.trigger.kind !== existing.trigger_kind) {
      throw new ServiceError('immutable_field', 'trigger.kind cannot be changed after creation', { field: 'trigger.kind' });
    }
    const fields = taskFieldsOf(body, existing, this.production);
    await this.checkReferences(org, body);
    if (body.trigger?.kind === 'webhook') Object.assign(fields, patchedSecret(existing, body.trigger, this.runtime.secrets));
    const updated = await unique('task', () => this.collections.tasks.update(org, existing.id, fields));
    if (!updated) throw new ServiceError('not_found', `task ${id} not found`);
    this.runtime.inbound.forget(existing);
    this.runtime.service.taskChanged(org, updated);
    return updated;
  }

  /** its trigger stops, pending fires are cancelled */
  async delete(org: OrgId, id: string): Promise<void> {
    const task = await this.get(org, id);
    await this.collections.tasks.delete(org, task.id);
    this.runtime.inbound.forget(task);
    this.runtime.service.taskDeleted(task.id);
  }

  /** a new webhook secret; the previous one keeps verifying for `overlapSecs` (default: rotatedSecret's) */
  async rotateSecret(org: OrgId, id: string, overlapSecs: number | undefined): Promise<TaskWithSecret> {
    const task = await this.get(org, id);
    const { secret, fields } = rotatedSecret(task, this.runtime.secrets, this.runtime.now(), overlapSecs);
    const updated = await this.collections.tasks.update(org, task.id, fields);
    if (!updated) throw new ServiceError('not_found', `task ${id} not found`);
    this.runtime.inbound.forget(updated);
    return { task: updated, secret };
  }

  /** one page of the task's inbound webhook deliveries (404 for a task the organization does not have) */
  async deliveries(org: OrgId, id: string, options: ListOptions): Promise<Page<InboundDeliveryDoc>> {
    const task = await this.get(org, id);
    return this.collections.inboundDeliveries.list(org, { ...options, filter: { ...options.filter, task_id: task.id } });
  }

  /** the agent, realm and sources a create or patch sets must be the organization's (null keeps the default) */
  private async checkReferences(org: OrgId, body: TaskInput): Promise<void> {
    await assertReferences(this.collections, org, {
      agent: body.agent == null ? undefined : { path: 'agent', value: body.agent },
      realm: body.realm == null ? undefined : { path: 'realm', value: body.realm },
      sources: body.enabled_source_ids == null ? undefined : { path: 'enabled_source_ids', ids: body.enabled_source_ids },
    });
  }
}
