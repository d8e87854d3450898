/**
 * The model-turn port: who performs a run's model turns. By default the
 * agent runtime calls the provider itself (model-turn.ts); a runner plugged
 * in with `AgentRuntime.useTurnRunner` may take the turns of some runs
 * elsewhere (the workers domain sends task and binding turns to worker
 * processes). The runner answers the turn without its cost; the runtime
 * prices it.
 */
import type { TurnOutput } from '../../actors/agent-run.types.js';
import type { ChatMessage } from '../llm/types.js';
import type { LiveRun } from './live-run.js';

export type RunnerTurnOutput = Omit<TurnOutput, 'costUsd'>;

export interface TurnRunner {
  /** whether this runner performs the run's model turns (otherwise the runtime calls the model in-process) */
  takes(run: LiveRun): boolean;
  /** performs turn `turn` (1 for the first) of the run; text deltas go to `run.feed` and `run.text` as they come */
  run(run: LiveRun, turn: number, messages: readonly ChatMessage[], signal: AbortSignal): Promise<RunnerTurnOutput>;
  /**
   * The run was cancelled. The machine ends it after the turn in progress; a
   * runner whose turn has not started yet (still queued) may end that turn now, empty.
   */
  cancelled?(run: LiveRun): void;
}
