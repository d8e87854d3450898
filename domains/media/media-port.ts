/** The host side of the `media` port: a tool's started tasks become durable media jobs of the calling organization. */
import { ToolError, type MediaJobsPort, type PortScope } from '../../connectors/contract.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { asOrgId } from '../../runtime/store/types.js';
import { asToolErrors } from '../../runtime/tools/ports.js';
import type { Collections } from '../collections.js';
import { viewOf } from './documents.js';
import { isFinished, type MediaJobs } from './service.js';

/** `jobs`: the service, known once the job queue is open (after the plugins load) */
export function mediaPort(collections: Pick<Collections, 'sources'>, jobs: () => MediaJobs | null): (scope: PortScope) => MediaJobsPort {
  const service = (): MediaJobs => {
    const current = jobs();
    if (current === null) throw new ToolError('port_unavailable', 'media jobs are not available yet');
    return current;
  };
  return (scope) => {
    const org = asOrgId(scope.orgId);
    // the jobs this tool call started (a port is bound per call), by run: a wait on them may hand the call's result over
    const started: { readonly id: string; readonly runId: string | null }[] = [];
    return {
      track: (job) =>
        asToolErrors(async () => {
          const source = await collections.sources.get(org, job.sourceId);
          if (!source) throw new ToolError('not_found', `no source ${job.sourceId}`);
          const doc = await service().track(org, {
            realm: scope.realm ?? DEFAULT_REALM,
            runId: job.runId,
            sourceId: job.sourceId,
            connector: source.connector,
            tool: job.tool,
            taskId: job.taskId,
            cost: job.cost,
            request: { ...job.request },
            createdBy: null,
          });
          started.push({ id: doc.id, runId: job.runId });
          return viewOf(doc);
        }),
      wait: async (jobId, signal) => {
        const runId = started.find((job) => job.id === jobId)?.runId ?? null;
        if (runId !== null) {
          const current = await service().get(org, jobId);
          if (isFinished(current.status)) return viewOf(current);
          // the run waits for the jobs without its tool step (it may park): the tool's own answer is dropped
          const keys = started.filter((job) => job.runId === runId).map((job) => job.id);
          if (service().handOver(org, runId, keys)) throw new ToolError('handed_over', 'the run waits for the media job without this call', { job_id: jobId });
        }
        return service().wait(org, jobId, signal);
      },
      get: async (jobId) => {
        const doc = await service().find(org, jobId);
        return doc === null ? null : viewOf(doc);
      },
    };
  };
}
