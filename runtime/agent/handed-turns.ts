/**
 * Model turns handed over to a turn runner (turn-runner.ts): which runs hand
 * their turns over, what a turn's performer reads of the run waiting on it
 * (live or parked), and the delivery of its result, priced as the runtime
 * prices its own turns. The wait itself is a deferred wait like a tool's
 * (deferred-calls.ts): the run waits in `awaiting_turn`, parks after
 * `AGENT_PARK_AFTER_MS`, and comes back for the result.
 */
import type { AgentRunContext, DeferredWait } from '../../actors/agent-run.types.js';
import type { PlatformCollections as Collections } from '../collections.js';
import { costUsd, type PriceTable } from '../llm/prices.js';
import type { ChatMessage } from '../llm/types.js';
import type { OrgId } from '../store/types.js';
import type { DeferredCalls } from './deferred-calls.js';
import type { LiveRun } from './live-run.js';
import type { AwaitedTurn, RunParking } from './parking.js';
import type { RunFeed } from './run-feed.js';
import type { RunnerTurnResult, TurnRunner } from './turn-runner.js';

export interface HandedTurnsHost {
  readonly runs: Map<string, LiveRun>;
  readonly parking: RunParking;
  readonly calls: DeferredCalls;
  readonly collections: Collections;
  readonly prices: PriceTable;
  /** the conversation of a live run */
  messagesOf(runId: string): readonly ChatMessage[] | undefined;
  /** a live run's feed, or a parked run's (read back from the store) */
  feed(runId: string): RunFeed | undefined;
}

export class HandedTurns {
  private runner: TurnRunner | null = null;

  constructor(private readonly host: HandedTurnsHost) {}

  /** Plugs the runner in (once, at start): it follows each turn handed over, those of parked runs a previous process left included. */
  use(runner: TurnRunner): void {
    this.runner = runner;
    this.host.calls.listen(runner.kind, (org, runId, wait) =>
      runner.follow(org, runId, wait, (result) => this.deliver(org, runId, wait.keys[0] ?? '', result)),
    );
  }

  /** Whether the run's turns are handed over (a run that cannot park waits for nothing outside: its turns stay in-process). */
  takes(run: LiveRun): boolean {
    return this.runner?.takes(run) === true && this.host.parking.parks(run);
  }

  /** The run entered `awaiting_turn`: it may park once idle, and its runner follows the turn. */
  began(run: LiveRun, context: AgentRunContext): void {
    this.host.parking.waiting(run);
    this.host.calls.began(run, context.turnWait as DeferredWait);
    run.handingOver = undefined;
  }

  /**
   * Hands turn `turn` of the run over: what it waits on. The wait is known
   * before the job is out, since a worker may claim it and ask for its input
   * before the machine has entered `awaiting_turn`.
   */
  async handOver(run: LiveRun, turn: number): Promise<DeferredWait> {
    if (!this.runner) throw new Error('no turn runner');
    const wait = this.runner.waitOf(run, turn);
    run.handingOver = wait;
    try {
      await this.runner.handOver(run, turn);
    } catch (error) {
      run.handingOver = undefined;
      throw error;
    }
    return wait;
  }

  /** What the handed-over turn `key` of a run (live or parked) needs to be performed; undefined when the run no longer waits on it. */
  async awaitedTurn(org: OrgId, runId: string, key: string): Promise<AwaitedTurn | undefined> {
    if (!this.waitsOn(org, runId, key)) return undefined;
    const run = this.host.runs.get(runId);
    if (!run) return this.host.parking.awaitedTurn(org, runId, key);
    const messages = this.host.messagesOf(runId);
    return messages ? { request: run.request, messages } : undefined;
  }

  /** The feed the text of the handed-over turn `key` goes to (a parked run's too, loaded); undefined when the run no longer waits on it. */
  async turnFeed(org: OrgId, runId: string, key: string): Promise<RunFeed | undefined> {
    if (!this.waitsOn(org, runId, key)) return undefined;
    const feed = this.host.feed(runId);
    await feed?.ready;
    return feed?.ended === false ? feed : undefined;
  }

  private waitsOn(org: OrgId, runId: string, key: string): boolean {
    if (this.host.calls.waitOf(org, runId)?.keys.includes(key) === true) return true;
    const run = this.host.runs.get(runId);
    return run?.request.orgId === org && !run.finished && run.handingOver?.keys.includes(key) === true;
  }

  /** A turn's result to the run waiting on it (a parked run comes back for it); false when it no longer waits. */
  private async deliver(org: OrgId, runId: string, key: string, result: RunnerTurnResult): Promise<boolean> {
    const { calls, runs, collections, prices } = this.host;
    if ('failure' in result) return calls.deliver(org, runId, { type: 'DEFERRED_TURN', key, failure: result.failure });
    const model = runs.get(runId)?.request.model ?? (await collections.agentRuns.get(org, runId))?.model ?? '';
    return calls.deliver(org, runId, { type: 'DEFERRED_TURN', key, output: { ...result.output, costUsd: costUsd(model, result.output.usage, prices) } });
  }
}
