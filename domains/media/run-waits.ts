/**
 * Runs waiting on media jobs without holding a tool step: a media tool call
 * (`wait: true`) of a run that can park hands its result over to the end of
 * its jobs (runtime/agent/deferred-calls.ts). The run waits in
 * `awaiting_result`, parks like an approval wait, and is answered here when
 * the last of the call's jobs ends (MediaJobs.settle), when it began waiting
 * on jobs already ended, or, after a restart, for the jobs that ended while
 * the service was down.
 *
 * The call's result is the job's view as the tool answers it after a live
 * wait: `{job_id, status: "succeeded", outputs, cost, ...request}`, or the
 * error of the first job that did not succeed (`cancelled`, `timeout`, ...).
 */
import type { Logger } from 'pino';
import type { DeferredWait } from '../../actors/agent-run.types.js';
import type { DeferredCalls } from '../../runtime/agent/deferred-calls.js';
import type { OrgId } from '../../runtime/store/types.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import type { MediaJobDoc } from './documents.js';
import { isFinished, type MediaJobs } from './service.js';

/** the kind of the waits this module answers */
const MEDIA_WAIT = 'media';

/** What the call answers once every job of `jobs` ended (the order the tool started them). */
function outcomeOf(jobs: readonly MediaJobDoc[]): ToolOutcome {
  const failed = jobs.find((job) => job.status !== 'succeeded');
  if (failed !== undefined) {
    return failedOutcome(
      toolErrorBody(failed.error?.code ?? 'cancelled', failed.error?.message ?? 'the media job was cancelled', { job_id: failed.id, status: failed.status }),
    );
  }
  const ids = jobs.length === 1 ? { job_id: jobs[0]?.id } : { job_ids: jobs.map((job) => job.id) };
  const costs = jobs.map((job) => job.cost);
  return {
    result: {
      ...ids,
      status: 'succeeded',
      ...jobs[0]?.request,
      cost: costs.includes(null) ? null : costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0),
      outputs: jobs.flatMap((job) => job.outputs),
    },
  };
}

/** Lets media tool calls hand their result over, and answers the runs waiting on them (from now on, and those parked before). */
export function connectRunWaits(jobs: MediaJobs, calls: Pick<DeferredCalls, 'listen' | 'handOver' | 'waitOf' | 'deliver'>, logger: Logger): void {
  const answer = async (org: OrgId, runId: string, wait: DeferredWait): Promise<void> => {
    const docs: MediaJobDoc[] = [];
    for (const id of wait.keys) {
      const doc = await jobs.find(org, id);
      if (doc === null || !isFinished(doc.status)) return;
      docs.push(doc);
    }
    await calls.deliver(org, runId, { type: 'DEFERRED_RESULT', key: wait.keys[0] as string, outcome: outcomeOf(docs) });
  };
  const check = (org: OrgId, runId: string, wait: DeferredWait): void => {
    answer(org, runId, wait).catch((error: unknown) => logger.error({ err: error, run_id: runId }, 'media job: the waiting run could not be answered'));
  };
  jobs.handOver = (org, runId, jobIds) => calls.handOver(org, runId, { kind: MEDIA_WAIT, keys: jobIds });
  jobs.onSettled = (org, job) => {
    if (job.run_id === null) return;
    const wait = calls.waitOf(org, job.run_id);
    if (wait?.kind === MEDIA_WAIT && wait.keys.includes(job.id)) check(org, job.run_id, wait);
  };
  calls.listen(MEDIA_WAIT, check);
}
