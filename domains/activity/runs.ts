/**
 * What agent runs report (chat replies, task runs, binding replies alike):
 * started and ended in the feed, approvals asked and decided, and the
 * notifications of a failed run (to the user it ran for: the chatting user,
 * the task's creator, the binding's creator) and of a waiting approval (that
 * user and the organization's owners and admins).
 */
import type { Collections } from '../collections.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ActivityRecorder } from './record.js';

export type { ActivityRecorder };
import type { EntryDetails } from './types.js';
import type { RunEnding, RunFacts, RunObserver } from '../../runtime/agent/run-observer.js';

/** `chat`, `binding`, `task`, `workflow_step` or `pipeline_agent` */
const runKindOf = (run: RunFacts): string => (run.kind !== 'chat' ? run.kind : run.bindingId ? 'binding' : 'chat');

const runDetails = (run: RunFacts): EntryDetails => ({
  run_id: run.runId,
  run_kind: runKindOf(run),
  task_id: run.taskId ?? null,
  conversation_id: run.conversationId ?? null,
  binding_id: run.bindingId ?? null,
});

const subjectOf = (run: RunFacts) => ({ kind: 'run', id: run.runId });

async function reportRunStarted(recorder: ActivityRecorder, org: OrgId, run: RunFacts): Promise<void> {
  await recorder.activity(org, {
    kind: 'run.started',
    actor: await recorder.userActor(run.userId),
    subject: subjectOf(run),
    summary: `${runKindOf(run)} run started`,
    details: runDetails(run),
  });
}

async function reportRunEnded(recorder: ActivityRecorder, org: OrgId, run: RunFacts, end: RunEnding): Promise<void> {
  const details = { ...runDetails(run), status: end.status, reason: end.reason };
  await recorder.activity(org, {
    kind: 'run.ended',
    actor: await recorder.userActor(run.userId),
    subject: subjectOf(run),
    summary: `${runKindOf(run)} run ${end.status}${end.reason && end.reason !== end.status ? ` (${end.reason})` : ''}`,
    details,
  });
  if (end.status !== 'failed') return;
  await recorder.notify(org, [run.userId], {
    kind: 'run.failed',
    title: `A ${runKindOf(run)} run failed: ${end.reason ?? 'error'}`,
    subject: subjectOf(run),
    details: { ...details, message: end.message },
  });
}

/** a task run that ended before its agent run started (no model configured, task deleted ...): it ran for the task's creator */
export async function reportTaskRunEnded(
  recorder: ActivityRecorder,
  tasks: Collections['tasks'],
  org: OrgId,
  run: { taskId: string; runId: string },
  end: RunEnding,
): Promise<void> {
  const creator = (await tasks.get(org, run.taskId).catch(() => null))?.created_by;
  if (creator !== undefined) await reportRunEnded(recorder, org, { runId: run.runId, kind: 'task', userId: creator, taskId: run.taskId }, end);
}

/** an approval asked: the feed, and a notification to whom the work runs for and the admins (runs and voice sessions alike) */
export async function reportApprovalRequested(
  recorder: ActivityRecorder,
  org: OrgId,
  userId: string,
  context: EntryDetails,
  approvalId: string,
  tool: string,
): Promise<void> {
  const details = { ...context, approval_id: approvalId, tool };
  const subject = { kind: 'approval', id: approvalId };
  await recorder.activity(org, {
    kind: 'approval.requested',
    actor: await recorder.userActor(userId),
    subject,
    summary: `approval requested for ${tool}`,
    details,
  });
  await recorder.notify(org, [userId, ...(await recorder.admins(org))], {
    kind: 'approval.requested',
    title: `Approval needed: ${tool}`,
    subject,
    details,
  });
}

/** an approval answered (or denied by nobody when its work ended): the feed */
export async function reportApprovalDecided(
  recorder: ActivityRecorder,
  org: OrgId,
  context: EntryDetails,
  approvalId: string,
  decision: string,
  decidedBy: string | null,
): Promise<void> {
  await recorder.activity(org, {
    kind: 'approval.decided',
    actor: await recorder.userActor(decidedBy),
    subject: { kind: 'approval', id: approvalId },
    summary: `approval ${decision}`,
    details: { ...context, approval_id: approvalId, decision },
  });
}

/** the agent runtime's observer: its runs and approvals into the feed and notifications */
export const activityRunObserver = (recorder: ActivityRecorder): RunObserver => ({
  runStarted: (org, run) => reportRunStarted(recorder, org, run),
  runEnded: (org, run, end) => reportRunEnded(recorder, org, run, end),
  approvalRequested: (org, run, approvalId, tool) => reportApprovalRequested(recorder, org, run.userId, runDetails(run), approvalId, tool),
  approvalDecided: (org, run, approvalId, decision, decidedBy) => reportApprovalDecided(recorder, org, runDetails(run), approvalId, decision, decidedBy),
});
