/**
 * The stored side of task runs outside their agent run: ending runs that
 * never started (refused, cancelled, failed to launch), settling runs a
 * previous process left running, and telling waiters (an SSE client) when a
 * pending run has started or ended without starting.
 */
import type { Collections } from '../collections.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { TaskRunDoc, TaskRunStatus } from './types.js';

export class TaskRunLedger {
  /** listeners of pending runs (an SSE client waiting for the run to start or end) */
  private readonly startWaiters = new Map<string, (() => void)[]>();

  constructor(
    private readonly collections: Collections,
    private readonly clock: Pick<RuntimeClock, 'now'>,
  ) {}

  /** Calls `listener` once the pending run has started or ended without starting; returns the unsubscribe function. */
  onStarted(runId: string, listener: () => void): () => void {
    const listeners = this.startWaiters.get(runId) ?? [];
    listeners.push(listener);
    this.startWaiters.set(runId, listeners);
    return () => {
      const remaining = (this.startWaiters.get(runId) ?? []).filter((entry) => entry !== listener);
      if (remaining.length === 0) this.startWaiters.delete(runId);
      else this.startWaiters.set(runId, remaining);
    };
  }

  started(runId: string): void {
    const listeners = this.startWaiters.get(runId);
    this.startWaiters.delete(runId);
    for (const listener of listeners ?? []) listener();
  }

  /** Ends runs that will not (or did not) run, and wakes their waiters. */
  async finish(org: OrgId, runIds: readonly string[], status: TaskRunStatus, reason: string, message: string): Promise<void> {
    const at = isoAt(this.clock.now());
    for (const runId of runIds) {
      await this.collections.taskRuns.update(org, runId, { status, reason, error_message: message, finished_at: at });
      this.started(runId);
    }
  }

  /**
   * Task runs a previous process left running: their agent runs were
   * finalized as interrupted; copy that. Two kinds go on, returned by task
   * id (they keep their slots): a run parked on an approval or a media job
   * (runtime/agent/parking.ts) waits on, and a run dispatched to a gateway
   * (no agent run, a stored dispatch) is resumed by the caller (`dispatched`).
   */
  async settleInterrupted(): Promise<{ kept: Map<string, string[]>; dispatched: (TaskRunDoc & { readonly org_id: OrgId })[] }> {
    const kept = new Map<string, string[]>();
    const dispatched: (TaskRunDoc & { readonly org_id: OrgId })[] = [];
    const runs = await this.collections.taskRuns.findAcrossOrgs({ status: 'running' }, 1_000_000);
    for (const run of runs) {
      const agentRun = await this.collections.agentRuns.get(run.org_id, run.id);
      // parked on an approval, or on a tool result handed over (a media job: its record says `running`)
      const parked = agentRun?.parked_at != null && (agentRun.status === 'awaiting_approval' || agentRun.status === 'running');
      const onGateway = !agentRun && (await this.collections.gatewayDispatches.findOne(run.org_id, { workflow_run_id: run.id, step_id: run.task_id })) !== null;
      if (parked || onGateway) {
        kept.set(run.task_id, [...(kept.get(run.task_id) ?? []), run.id]);
        if (onGateway) dispatched.push(run);
        continue;
      }
      const status: TaskRunStatus =
        agentRun && agentRun.status !== 'pending' && agentRun.status !== 'running' && agentRun.status !== 'awaiting_approval' ? agentRun.status : 'failed';
      await this.collections.taskRuns.update(run.org_id, run.id, {
        status,
        reason: agentRun?.reason ?? 'interrupted',
        error_message: agentRun?.error_message ?? 'the service stopped while the run was in flight',
        cost_usd: agentRun?.cost_usd ?? run.cost_usd,
        finished_at: agentRun?.finished_at ?? isoAt(this.clock.now()),
      });
    }
    return { kept, dispatched };
  }
}
