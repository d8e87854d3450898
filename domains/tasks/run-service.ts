/** A task's runs as /tasks/:id/runs reads them: one run of a task, its events and artifacts, answers to its approvals. */
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { AgentRunEventDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { listArtifacts } from '../../runtime/files/artifacts.js';
import type { FileStore } from '../../runtime/files/store.js';
import { getOr404 } from '../../runtime/store/documents.js';
import type { ListOptions, OrgId, Page } from '../../runtime/store/types.js';
import type { Collections } from '../collections.js';
import { answerRunApproval } from './run-approval.js';
import type { TaskDoc, TaskRunDoc } from './types.js';

export type { AgentRunEventDoc };

type RunAnswer = Parameters<typeof answerRunApproval>[2];

export class TaskRunService {
  constructor(
    private readonly collections: Collections,
    private readonly agentRuntime: AgentRuntime,
    private readonly files: FileStore,
  ) {}

  task(org: OrgId, taskId: string): Promise<TaskDoc> {
    return getOr404(this.collections.tasks, org, taskId, 'task');
  }

  /** A run of that task; another task's run answers 404. */
  async run(org: OrgId, taskId: string, runId: string): Promise<TaskRunDoc> {
    await this.task(org, taskId);
    const run = await this.collections.taskRuns.get(org, runId);
    if (!run || run.task_id !== taskId) throw new ServiceError('not_found', `run ${runId} not found`);
    return run;
  }

  list(org: OrgId, options: ListOptions): Promise<Page<TaskRunDoc>> {
    return this.collections.taskRuns.list(org, options);
  }

  events(org: OrgId, runId: string) {
    return this.collections.agentRunEvents.findAll(org, { run_id: runId });
  }

  /** A run's events and artifacts, read at once. */
  details(org: OrgId, runId: string) {
    return Promise.all([this.events(org, runId), listArtifacts(this.files, org, runId)]);
  }

  answerApproval(run: TaskRunDoc, answer: RunAnswer) {
    return answerRunApproval({ agentRuntime: this.agentRuntime, collections: this.collections }, run, answer);
  }
}
