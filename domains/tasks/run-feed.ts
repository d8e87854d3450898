/**
 * Task runs as the change feed (`/ws`, topic `task_runs`) sees them: the
 * collection of task runs, observed. Every write path of a run (a fire, its
 * launch, its end, a cancel, a refusal) stores through this collection, so
 * each stored status is announced without a hook in any of them:
 * `task_run.created` (pending), `task_run.started` (running) and
 * `task_run.ended` (succeeded, failed, cancelled).
 */
import type { ChangeFeed } from '../../runtime/feed/change-feed.js';
import type { OrgCollection, OrgId } from '../../runtime/store/types.js';
import type { Collections } from '../collections.js';
import type { TaskRunDoc, TaskRunStatus } from './types.js';

const EVENT_OF: Record<TaskRunStatus, string> = {
  pending: 'task_run.created',
  running: 'task_run.started',
  succeeded: 'task_run.ended',
  failed: 'task_run.ended',
  cancelled: 'task_run.ended',
};

/** The collections with task runs observed; everything else as it was. */
export function withTaskRunFeed(collections: Collections, feed: ChangeFeed): Collections {
  return { ...collections, taskRuns: observeTaskRuns(collections.taskRuns, feed) };
}

function observeTaskRuns(runs: OrgCollection<TaskRunDoc>, feed: ChangeFeed): OrgCollection<TaskRunDoc> {
  const publish = (org: OrgId, run: TaskRunDoc): void =>
    feed.publish(org, {
      topic: 'task_runs',
      event: EVENT_OF[run.status],
      taskId: run.task_id,
      data: {
        run_id: run.id,
        task_id: run.task_id,
        status: run.status,
        reason: run.reason,
        error_message: run.error_message,
        origin: run.origin,
        cost_usd: run.cost_usd,
        started_at: run.started_at,
        finished_at: run.finished_at,
      },
    });
  return {
    spec: runs.spec,
    insert: async (org, doc) => {
      const run = await runs.insert(org, doc);
      publish(org, run);
      return run;
    },
    update: async (org, id, patch) => {
      const run = await runs.update(org, id, patch);
      // only status changes are news (not a policy audit entry or a cost)
      if (run && 'status' in patch) publish(org, run);
      return run;
    },
    get: (org, id) => runs.get(org, id),
    findOne: (org, filter) => runs.findOne(org, filter),
    list: (org, options) => runs.list(org, options),
    findAll: (org, filter) => runs.findAll(org, filter),
    count: (org, filter) => runs.count(org, filter),
    delete: (org, id) => runs.delete(org, id),
    deleteWhere: (org, filter) => runs.deleteWhere(org, filter),
    search: (org, query, options) => runs.search(org, query, options),
    revision: (org) => runs.revision(org),
    findAcrossOrgs: (filter, limit) => runs.findAcrossOrgs(filter, limit),
  };
}
