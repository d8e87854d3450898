/**
 * Answering an approval an agent run asked for (a task run, a workflow step's
 * or a pipeline's agent run): the live (or parked) run takes it while it
 * waits; otherwise the run's events tell a stranger's or unknown approval
 * (404) from one already decided or left behind by the run's end (409).
 */
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import type { Collections } from '../collections.js';
import { conflict, ServiceError } from '../../runtime/errors.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface RunApprovalAnswer {
  readonly orgId: OrgId;
  readonly approvalId: string;
  readonly approved: boolean;
  readonly userId: string;
}

export async function answerRunApproval(
  deps: { readonly agentRuntime: Pick<AgentRuntime, 'pendingApproval' | 'answer'>; readonly collections: Pick<Collections, 'agentRunEvents' | 'agentRuns'> },
  /** the agent run (its id) and the status its owner shows */
  run: { readonly id: string; readonly status: string },
  answer: RunApprovalAnswer,
): Promise<{ approval_id: string; approved: boolean; decision: 'approved' | 'denied' }> {
  const { agentRuntime, collections } = deps;
  const { orgId, approvalId, approved } = answer;
  if (agentRuntime.pendingApproval(orgId, approvalId) === run.id) {
    if ((await agentRuntime.answer(orgId, approvalId, approved, answer.userId)) === 'accepted') {
      return { approval_id: approvalId, approved, decision: approved ? 'approved' : 'denied' };
    }
  }
  const events = await collections.agentRunEvents.findAll(orgId, { approval_id: approvalId });
  if (!events.some((event) => event.type === 'approval_required' && event.run_id === run.id)) {
    throw new ServiceError('not_found', `approval ${approvalId} not found`);
  }
  const decided = events.find((event) => event.type === 'approval_decision');
  const agentRun = await collections.agentRuns.get(orgId, run.id);
  throw conflict('this approval is no longer waiting for an answer', {
    decision: decided ? decided.data['decision'] : null,
    run_status: agentRun?.status ?? run.status,
  });
}
