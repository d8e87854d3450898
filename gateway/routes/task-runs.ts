/**
 * /tasks/:id/runs: a task's run history, one run, its live or replayed
 * events, cancel, and answers to its approvals. Parse, call the task and
 * agent runtimes, present.
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import type { HttpResponse } from '../http.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { liveStream, pipeFeed, RECONNECT_MS, SSE_HEADERS, storedStream } from '../sse.js';
import { presentRun } from './task-present.js';
import { approvalParams, eventsQuery, runParams, runSchema } from './task-schemas.js';

export function taskRunRoutes({ taskRunService: runs, agentRuntime, taskRuntime }: Services): AnyRoute[] {
  const { service } = taskRuntime;

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

  return [
    route({
      method: 'GET',
      path: '/tasks/:id/runs',
      tag: 'tasks',
      summary: 'Run history, newest last: status, input, transcript, artifacts, policy audit',
      auth: 'bearer',
      permission: 'task:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(runSchema),
      handler: async ({ auth, params, query }) => {
        const task = await runs.task(auth.orgId, params.id);
        const page = await runs.list(auth.orgId, listOptions(query, { task_id: task.id }));
        // per run on the page, one event query and one walk of its artifact folder, all at once
        const details = await Promise.all(page.items.map((run) => runs.details(auth.orgId, run.id)));
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
      method: 'GET',
      path: '/tasks/:id/runs/:run_id',
      tag: 'tasks',
      summary: 'One run with its transcript',
      auth: 'bearer',
      permission: 'task:read',
      params: runParams,
      response: runSchema,
      handler: async ({ auth, params }) => {
        const run = await runs.run(auth.orgId, params.id, params.run_id);
        const [events, artifacts] = await runs.details(auth.orgId, run.id);
        return { status: 200, json: presentRun(run, events, artifacts) };
      },
    }),
    route({
      method: 'GET',
      path: '/tasks/:id/runs/:run_id/events',
      tag: 'tasks',
      summary: 'Server-Sent Events of a run: live with approvals inline; a finished (or not yet started) run replays its events and closes',
      auth: 'bearer',
      permission: 'task:read',
      params: runParams,
      query: eventsQuery,
      handler: async ({ auth, params, query, request }) => {
        const run = await runs.run(auth.orgId, params.id, params.run_id);
        const header = request.headers['last-event-id']?.trim();
        let after = query.last_event_id ?? 0;
        if (header !== undefined && header !== '') {
          if (!/^\d+$/.test(header)) throw new ServiceError('validation_error', 'invalid header: Last-Event-ID must be an event id (an integer)');
          after = Number(header);
        }
        const feed = agentRuntime.feed(run.id);
        if (feed) return liveStream(feed, after, { 'x-run-id': run.id });
        if (run.status === 'pending') return pendingStream(run.id, after);
        return storedStream(await runs.events(auth.orgId, run.id), after);
      },
    }),
    route({
      method: 'POST',
      path: '/tasks/:id/runs/:run_id/cancel',
      tag: 'tasks',
      summary: 'Cancel a run: a pending fire leaves the queue, a running run stops after its current step',
      auth: 'bearer',
      permission: 'task:manage',
      params: runParams,
      status: 202,
      response: z.object({ run_id: z.string(), status: z.enum(['cancelled', 'cancelling']) }),
      handler: async ({ auth, params }) => {
        await runs.task(auth.orgId, params.id);
        const outcome = await service.cancel(auth.orgId, params.id, params.run_id);
        return { status: 202, json: { run_id: params.run_id, status: outcome === 'cancelled' ? 'cancelled' : 'cancelling' } };
      },
    }),
    route({
      method: 'POST',
      path: '/tasks/:id/runs/:run_id/approvals/:approval_id',
      tag: 'tasks',
      audit: { action: 'decide' },
      summary: 'Answer an approval_required event of a task run',
      auth: 'bearer',
      permission: 'task:manage',
      params: approvalParams,
      body: z.strictObject({ approved: z.boolean({ message: 'approved must be true or false' }) }),
      response: z.object({ approval_id: z.string(), approved: z.boolean(), decision: z.enum(['approved', 'denied']) }),
      handler: async ({ auth, params, body }) => {
        const run = await runs.run(auth.orgId, params.id, params.run_id);
        const answer = { orgId: auth.orgId, approvalId: params.approval_id, approved: body.approved, userId: auth.userId };
        return { status: 200, json: await runs.answerApproval(run, answer) };
      },
    }),
  ];
}
