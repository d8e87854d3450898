/**
 * /tasks: automatic agent runs started by a schedule (five-field cron, UTC),
 * a signed webhook or a platform event: the tasks themselves, firing one by
 * hand, their inbound deliveries, and (task-runs.ts) their runs. The tasks
 * domain (domains/tasks/: definitions.ts, the runtime) owns the actors and the rules; these routes
 * parse, call it, present (schemas: task-schemas.ts; views: task-present.ts).
 */
import { z } from 'zod';
import type { HttpRequest } from '../http.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { publicBaseUrl } from '../public-url.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { presentDelivery, presentTask } from './task-present.js';
import { taskRunRoutes } from './task-runs.js';
import { deliverySchema, taskCreate, taskPatch, taskSchema, taskWithRuntimeSchema } from './task-schemas.js';

export function taskRoutes(services: Services): AnyRoute[] {
  const { config, taskRuntime, taskDefinitions: definitions } = services;
  const { service } = taskRuntime;
  const baseUrl = (request: HttpRequest): string => publicBaseUrl(config, request);

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
        const { task, secret } = await definitions.create(auth.orgId, auth.userId, body);
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
        json: pageEnvelope(query, await definitions.list(auth.orgId, listOptions(query)), (task) => presentTask(task, baseUrl(request))),
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
        const task = await definitions.get(auth.orgId, params.id);
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
        const updated = await definitions.update(auth.orgId, params.id, body);
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
        await definitions.delete(auth.orgId, params.id);
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
        const { task, secret } = await definitions.rotateSecret(auth.orgId, params.id, body?.overlap_secs);
        return { status: 200, json: presentTask(task, baseUrl(request), secret) };
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
      // 503 worker_unavailable: feature `workers` on and no live worker serves the `agent` queue;
      // 503 sidecar_unavailable: the task's gateway was probed down and is still down
      errors: [503],
      handler: async ({ auth, params, body }) => {
        // a manual run asks now what it needs: its gateway up, or (workers on) a live `agent` worker; a fired run waits in the queue instead
        // (a disabled task is refused by `fire` with 409 first: there is nothing to ask then)
        const { gateway, enabled } = await definitions.get(auth.orgId, params.id);
        if (enabled && gateway != null) await services.gatewayDispatcher.requireAvailable(auth.orgId, gateway === 'default' ? null : gateway);
        else if (enabled && config.features.workers) services.workers.requireWorkerFor('agent');
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
        const page = await definitions.deliveries(auth.orgId, params.id, listOptions(query));
        return { status: 200, json: pageEnvelope(query, page, presentDelivery) };
      },
    }),
  ];
}
