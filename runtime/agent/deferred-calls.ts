/**
 * Handed-over tool calls: a tool that started long work outside the run (a
 * media job) hands its result over instead of waiting inside the tool step.
 * The call's step ends at once, the run waits in `awaiting_result` (and parks
 * like an approval wait, parking.ts), and the site that owns the work
 * delivers the outcome (`deliver`) when it is done: to the live run, or to
 * the parked one, which comes back for it (also after a restart).
 *
 * Only a run that can park hands over (its site has a resumer) and only to a
 * kind somebody delivers (`listen`); any other call waits inside its tool.
 * Model turns handed over to a turn runner (turn-runner.ts) wait and are
 * delivered the same way (`DEFERRED_TURN`, kind `model_turn`).
 */
import type { AgentRunEvent, DeferredWait, ExecutedTool } from '../../actors/agent-run.types.js';
import type { OrgId } from '../store/types.js';
import type { ToolOutcome } from '../tools/tool-result.js';
import type { LiveRun } from './live-run.js';
import type { RunParking } from './parking.js';

/** What answers a wait: a handed-over tool result or model turn. */
export type DeferredEvent = Extract<AgentRunEvent, { type: 'DEFERRED_RESULT' | 'DEFERRED_TURN' }>;

/** Told of every wait of its kind: when a run begins one, and the parked ones a previous process left. */
export type DeferredListener = (org: OrgId, runId: string, wait: DeferredWait) => void;

export interface DeferredHost {
  readonly runs: Map<string, LiveRun>;
  readonly parking: RunParking;
  /** the wait of a live run in `awaiting_result` or `awaiting_turn` (or brought back to `parked` for it), else null */
  liveWait(runId: string): DeferredWait | null;
  send(runId: string, event: DeferredEvent): boolean;
}

export class DeferredCalls {
  private readonly listeners = new Map<string, DeferredListener>();
  /** run id -> null while its tool executes and may hand over, the wait once it did */
  private readonly executing = new Map<string, DeferredWait | null>();

  constructor(private readonly host: DeferredHost) {}

  /** The site that delivers the results of `kind`; it is told at once of the parked waits of that kind. */
  listen(kind: string, listener: DeferredListener): void {
    this.listeners.set(kind, listener);
    for (const { org, runId, wait } of this.host.parking.deferredWaits()) if (wait.kind === kind) listener(org, runId, wait);
  }

  /** Runs a tool of `run`: its outcome, or the hand-over its tool made meanwhile (the outcome it ended with is dropped). */
  async execute(run: LiveRun, work: () => Promise<ToolOutcome>): Promise<ExecutedTool> {
    this.executing.set(run.id, null);
    try {
      const outcome = await work();
      const wait = this.executing.get(run.id) ?? null;
      return wait === null ? outcome : { deferred: wait };
    } finally {
      this.executing.delete(run.id);
    }
  }

  /** A tool of run `runId` hands its result over; false when it must wait itself (not executing, cannot park, nobody delivers `kind`). */
  handOver(org: OrgId, runId: string, wait: DeferredWait): boolean {
    const run = this.host.runs.get(runId);
    if (!run || run.request.orgId !== org || this.executing.get(runId) !== null) return false;
    if (!this.listeners.has(wait.kind) || !this.host.parking.parks(run)) return false;
    this.executing.set(runId, { kind: wait.kind, keys: [...wait.keys] });
    return true;
  }

  /** The run entered `awaiting_result` or `awaiting_turn`: its site checks whether the result is there already. */
  began(run: LiveRun, wait: DeferredWait): void {
    this.listeners.get(wait.kind)?.(run.request.orgId, run.id, wait);
  }

  /** What run `runId` of `org` waits on (live or parked), when it waits for a handed-over result or turn. */
  waitOf(org: OrgId, runId: string): DeferredWait | undefined {
    const run = this.host.runs.get(runId);
    if (run) return run.request.orgId === org ? (this.host.liveWait(runId) ?? undefined) : undefined;
    return this.host.parking.orgOf(runId) === org ? this.host.parking.deferredOf(runId) : undefined;
  }

  /** Answers the wait on `event.key` (a parked run comes back for it); false when the run does not wait on it. */
  async deliver(org: OrgId, runId: string, event: DeferredEvent): Promise<boolean> {
    if (this.waitOf(org, runId)?.keys.includes(event.key) !== true) return false;
    if (this.host.runs.has(runId)) return this.host.send(runId, event);
    return this.host.parking.deliver(runId, event);
  }
}
