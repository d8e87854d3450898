/**
 * How the host's media poller reads and cancels a Runway task (`PlatformJobs`): one
 * `GET /v1/tasks/:id` or `DELETE /v1/tasks/:id` per call through the SDK with its own retries off,
 * so that the host's poll loop (backoff with jitter, Retry-After honoured) is the only one.
 */
import type { PlatformJobs, PlatformTaskState } from '../contract.js';
import { runwayCall, runwayClient } from './client.js';
import { settingsOf } from './settings.js';
import { failureOf, type RunwayTask } from './tools/job-status.js';

const STATUS: Record<RunwayTask['status'], PlatformTaskState['status']> = {
  PENDING: 'queued',
  THROTTLED: 'queued',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

export const runwayJobs: PlatformJobs = {
  poll: async (config, taskId, signal, net) => {
    const client = runwayClient(settingsOf(config), net, 0);
    const task = (await runwayCall(signal, (options) => client.tasks.retrieve(taskId, options))) as RunwayTask;
    const failure = task.status === 'FAILED' ? failureOf(task) : null;
    return {
      status: STATUS[task.status],
      progress: task.status === 'SUCCEEDED' ? 1 : Math.min(1, Math.max(0, task.progress ?? 0)),
      outputs: task.status === 'SUCCEEDED' ? (task.output ?? []) : [],
      failure: failure === null ? null : { code: failure.code, message: failure.message },
    };
  },
  cancel: async (config, taskId, signal, net) => {
    const client = runwayClient(settingsOf(config), net, 0);
    await runwayCall(signal, (options) => client.tasks.delete(taskId, options));
  },
};
