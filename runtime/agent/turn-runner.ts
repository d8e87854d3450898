/**
 * The model-turn port: who performs a run's model turns. By default the
 * agent runtime calls the provider itself (model-turn.ts); a runner plugged
 * in with `AgentRuntime.useTurnRunner` takes the turns of some runs
 * elsewhere (the workers domain sends task and binding turns to worker
 * processes). Such a turn is handed over: the machine waits for it in
 * `awaiting_turn` (and parks there like any other wait, parking.ts), and the
 * runner delivers its result when it is there, to the live run or to the
 * parked one, which comes back for it (also after a restart). The runner
 * answers the turn without its cost; the runtime prices it.
 */
import type { DeferredWait, Failure, TurnOutput } from '../../actors/agent-run.types.js';
import type { OrgId } from '../store/types.js';
import type { LiveRun } from './live-run.js';

type RunnerTurnOutput = Omit<TurnOutput, 'costUsd'>;

/** A handed-over turn's result: its output, or why the run fails (e.g. `llm_provider_error`, `worker_failed`). */
export type RunnerTurnResult = { readonly output: RunnerTurnOutput } | { readonly failure: Failure };

export interface TurnRunner {
  /** the kind of the waits it hands over (`DeferredWait.kind`) */
  readonly kind: string;
  /** whether this runner performs the run's model turns (otherwise the runtime calls the model in-process) */
  takes(run: LiveRun): boolean;
  /** what the run waits on for turn `turn` (1 for the first) once it is handed over (known before, so its performer is answered at once) */
  waitOf(run: LiveRun, turn: number): DeferredWait;
  /** hands turn `turn` of the run over; the runner delivers its result later (`follow`) */
  handOver(run: LiveRun, turn: number): Promise<void>;
  /**
   * Follows a handed-over turn until its result is there, then `deliver`s it
   * (once; a late or repeated delivery is ignored). Called when a run begins
   * the wait and, at start, for the turns parked runs of a previous process wait on.
   */
  follow(org: OrgId, runId: string, wait: DeferredWait, deliver: (result: RunnerTurnResult) => Promise<boolean>): void;
}
