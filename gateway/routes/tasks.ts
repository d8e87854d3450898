/**
 * /tasks: automatic agent runs started by a schedule (five-field cron, UTC),
 * a signed webhook or a platform event: the tasks themselves, firing one by
 * hand, their inbound deliveries, and (task-runs.ts) their runs. The task
 * runtime (runtime/tasks/) owns the actors and the rules; these routes
 * parse, call it, present (schemas: task-schemas.ts; views: task-present.ts).
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { assertReferences } from '../../domains/references.js';
import type { OrgId } from '../../runtime/store/types.js';
import { newTaskDoc, taskFieldsOf, type TaskInput } from '../../domains/tasks/task-fields.js';
import type { TaskDoc } from '../../domains/tasks/types.js';
import { patchedSecret, rotatedSecret } from '../../domains/tasks/webhook-secret.js';
import type { HttpRequest } from '../http.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { publicBaseUrl } from '../public-url.js';
import { getOr404, unique } from '../../runtime/store/documents.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { presentDelivery, presentTask } from './task-present.js';
import { taskRunRoutes } from './task-runs.js';
import { deliverySchema, taskCreate, taskPatch, taskSchema, taskWithRuntimeSchema } from './task-schemas.js';

export function taskRoutes(services: Services): AnyRoute[] {
  const { collections, config, taskRuntime } = services;
  const { tasks, inboundDeliveries } = collections;
  const { service, inbound, secrets } = taskRuntime;
  const baseUrl = (request: HttpRequest): string => publicBaseUrl(config, request);

  /** the agent, realm and sources a create or patch sets must be the organization's (null keeps the default) */
  const checkReferences = (org: OrgId, body: TaskInput): Promise<unknown> =>
    assertReferences(collections, org, {
      agent: body.agent == null ? undefined : { path: 'agent', value: body.agent },
      realm: body.realm == null ? undefined : { path: 'realm', value: body.realm },
      sources: body.enabled_source_ids == null ? undefined : { path: 'enabled_source_ids', ids: body.enabled_source_ids },
    });

  const applied = (org: OrgId, before: TaskDoc | null, after: TaskDoc): void => {
    if (before) inbound.forget(before);
    service.taskChanged(org, after);
  };

  return [
    route({
      method: 'POST',
      path: '/tasks',
      tag: 'tasks',
      summary: 'Create a task; a webhook task answers its trigger.url and trigger.secret (shown only now)',
      auth: 'bearer',
      permission: 'task:manage',
      body: taskCreate,
      response: taskSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body, request }) => {
        const fields = taskFieldsOf(body, null, config.production);
        await checkReferences(auth.orgId, body);
        const { doc, secret } = newTaskDoc(body, fields, auth.userId, secrets);
        const task = await unique('task', () => tasks.insert(auth.orgId, doc));
        service.taskChanged(auth.orgId, task);
        return { status: 201, json: presentTask(task, baseUrl(request), secret) };
      },
    }),
    route({
      method: 'GET',
      path: '/tasks',
      tag: 'tasks',
      summary: 'List tasks (secrets masked)',
      auth: 'bearer',
      permission: 'task:read',
      query: pageQuery,
      response: pageSchema(taskSchema),
      handler: async ({ auth, query, request }) => ({
        status: 200,
        json: pageEnvelope(query, await tasks.list(auth.orgId, listOptions(query)), (task) => presentTask(task, baseUrl(request))),
      }),
    }),
    route({
      method: 'GET',
      path: '/tasks/:id',
      tag: 'tasks',
      summary: 'A task (secret masked), with its actor state and queue',
      auth: 'bearer',
      permission: 'task:read',
      params: idParams,
      response: taskWithRuntimeSchema,
      handler: async ({ auth, params, request }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        return { status: 200, json: { ...presentTask(task, baseUrl(request)), runtime: service.actorView(task.id) } };
      },
    }),
    route({
      method: 'PATCH',
      path: '/tasks/:id',
      tag: 'tasks',
      summary: 'Change a task (partial); the trigger kind is fixed at creation',
      auth: 'bearer',
      permission: 'task:manage',
      params: idParams,
      body: taskPatch,
      response: taskSchema,
      handler: async ({ auth, params, body, request }) => {
        const existing = await getOr404(tasks, auth.orgId, params.id, 'task');
        if (body.trigger !== undefined && body.trigger.kind !== existing.trigger_kind) {
          throw new ServiceError('immutable_field', 'trigger.kind cannot be changed after creation', { field: 'trigger.kind' });
        }
        const fields = taskFieldsOf(body, existing, config.production);
        await checkReferences(auth.orgId, body);
        if (body.trigger?.kind === 'webhook') Object.assign(fields, patchedSecret(existing, body.trigger, secrets));
        const updated = await unique('task', () => tasks.update(auth.orgId, existing.id, fields));
        if (!updated) throw new ServiceError('not_found', `task ${params.id} not found`);
        applied(auth.orgId, existing, updated);
        return { status: 200, json: presentTask(updated, baseUrl(request)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/tasks/:id',
      tag: 'tasks',
      summary: 'Delete a task: its trigger stops, pending fires are cancelled',
      auth: 'bearer',
      permission: 'task:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        await tasks.delete(auth.orgId, task.id);
        inbound.forget(task);
        service.taskDeleted(task.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/tasks/:id/rotate-secret',
      tag: 'tasks',
      summary: 'New webhook secret (shown only now); the previous one keeps verifying for overlap_secs (default 3600)',
      auth: 'bearer',
      permission: 'task:manage',
      params: idParams,
      body: z.strictObject({ overlap_secs: z.number().int().min(0).max(604_800).optional() }).optional(),
      response: taskSchema,
      handler: async ({ auth, params, body, request }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        const { secret, fields } = rotatedSecret(task, secrets, taskRuntime.now(), body?.overlap_secs);
        const updated = await tasks.update(auth.orgId, task.id, fields);
        if (!updated) throw new ServiceError('not_found', `task ${params.id} not found`);
        inbound.forget(updated);
        return { status: 200, json: presentTask(updated, baseUrl(request), secret) };
      },
    }),
    route({
      method: 'POST',
      path: '/tasks/:id/run',
      tag: 'tasks',
      summary: 'Fire the task now; `body` is what its template sees as trigger.body',
      auth: 'bearer',
      permission: 'task:manage',
      params: idParams,
      status: 202,
      body: z.strictObject({ body: z.unknown().optional() }).optional(),
      response: z.object({ run_id: z.string(), status: z.enum(['pending', 'running']) }),
      handler: async ({ auth, params, body }) => {
        const result = await service.fire(auth.orgId, params.id, { origin: 'manual', body: body?.body ?? null, headers: {}, delivery_id: null });
        return { status: 202, json: result };
      },
    }),
    ...taskRunRoutes(services),
    route({
      method: 'GET',
      path: '/tasks/:id/deliveries',
      tag: 'tasks',
      summary: 'Inbound webhook deliveries of the task, oldest first',
      auth: 'bearer',
      permission: 'task:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(deliverySchema),
      handler: async ({ auth, params, query }) => {
        const task = await getOr404(tasks, auth.orgId, params.id, 'task');
        return { status: 200, json: pageEnvelope(query, await inboundDeliveries.list(auth.orgId, listOptions(query, { task_id: task.id })), presentDelivery) };
      },
    }),
  ];
}
