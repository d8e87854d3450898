/**
 * The agent run machine driven directly: scripted model turns and tool steps
 * stand in for the runtime's side effects (they are the machine's own inputs,
 * not our code), XState's SimulatedClock moves the run and approval timeouts.
 * Asserts the states it passes and the effects it names (record, setStatus, finalize).
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, SimulatedClock, waitFor } from 'xstate';
import { agentRunMachine, runStatusOf } from '../../actors/agent-run.machine.js';
import type { AgentRunInput, DeferredWait, ExecutedTool, RecordEntry, RunEnd, TakenTurn, ToolStepOutput, TurnOutput } from '../../actors/agent-run.types.js';
import type { ChatMessage, ToolCall } from '../../runtime/llm/types.js';

const RUN_ID = 'run_01JTESTRUN';
const INPUT: AgentRunInput = {
  runId: RUN_ID,
  messages: [{ role: 'user', content: 'why is the build red?' }],
  approvalWrite: 'ask',
  approvalTimeoutMs: 60_000,
  maxTurns: 5,
  timeoutMs: 600_000,
  costCapUsd: null,
  spentTodayUsd: 0,
};

const call = (id: string, tool: string): ToolCall => ({ id, name: 'execute_connector_tool', arguments: { tool } });
const turn = (text: string, toolCalls: ToolCall[] = [], costUsd = 0.01): TurnOutput => ({
  text,
  toolCalls,
  finishReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn',
  usage: { input_tokens: 100, output_tokens: 10 },
  costUsd,
});
const execute = (tool: string, effect: 'read' | 'write'): ToolStepOutput => ({ kind: 'execute', tool, args: { q: 1 }, effect, resolved: { tool } });

interface Script {
  /** model turns in order; `'hang'` never answers (until the run is stopped); `{deferred}` hands the turn over */
  readonly turns: readonly (TakenTurn | 'hang' | Error)[];
  /** what each tool call's step gives, by call id; an Error is thrown */
  readonly steps?: Record<string, ToolStepOutput | Error>;
}

/** Starts the machine on a simulated clock with the script as its side effects; every effect it names is kept. */
function startRun(script: Script, input: Partial<AgentRunInput> = {}) {
  const clock = new SimulatedClock();
  const records: RecordEntry[] = [];
  const statuses: string[] = [];
  const ends: RunEnd[] = [];
  const executed: string[] = [];
  const turnWaits: DeferredWait[] = [];
  let turns = 0;
  const machine = agentRunMachine.provide({
    actors: {
      llmTurn: fromPromise<TakenTurn, { runId: string; turn: number; messages: readonly ChatMessage[] }>(async ({ signal }) => {
        const next = script.turns[turns++];
        if (next === undefined) throw new Error('the script has no more turns');
        if (next instanceof Error) throw next;
        if (next === 'hang') return new Promise<TurnOutput>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
        return next;
      }),
      toolStep: fromPromise<ToolStepOutput, { runId: string; call: ToolCall }>(async ({ input: step }) => {
        const planned = script.steps?.[step.call.id];
        if (planned === undefined) throw new Error(`no step for ${step.call.id}`);
        if (planned instanceof Error) throw planned;
        return planned;
      }),
      runTool: fromPromise<ExecutedTool, { runId: string; call: ToolCall; resolved: unknown }>(async ({ input: step }) => {
        executed.push(step.call.id);
        return { result: { ran: (step.resolved as { tool: string }).tool } };
      }),
    },
    actions: {
      record: (_args, entry: RecordEntry) => void records.push(entry),
      setStatus: (_args, { status }: { status: string }) => void statuses.push(status),
      finalize: (_args, end: RunEnd) => void ends.push(end),
      awaitTurn: ({ context }) => void turnWaits.push(context.turnWait as DeferredWait),
    },
  });
  const actor = createActor(machine, { input: { ...INPUT, ...input }, clock });
  actor.start();
  const done = () => waitFor(actor, (snapshot) => snapshot.status === 'done');
  const awaiting = () => waitFor(actor, (snapshot) => snapshot.matches({ active: 'awaiting_approval' }));
  return { actor, clock, records, statuses, ends, executed, done, awaiting, turnWaits, turnsAsked: () => turns };
}

const types = (records: readonly RecordEntry[]) => records.map((entry) => entry.type);
const toolResults = (records: readonly RecordEntry[]) => records.flatMap((entry) => (entry.type === 'tool_result' ? [entry.data.outcome] : []));

describe('agent run machine', () => {
  it('waits in pending until START, then runs a read tool without asking and succeeds', async () => {
    const run = startRun({ turns: [turn('', [call('c1', 'github.list_issues')]), turn('three issues')], steps: { c1: execute('github.list_issues', 'read') } });
    expect(runStatusOf(run.actor.getSnapshot())).toBe('pending');
    expect(run.turnsAsked()).toBe(0);
    run.actor.send({ type: 'START' });
    await run.done();
    expect(run.actor.getSnapshot().value).toBe('succeeded');
    expect(runStatusOf(run.actor.getSnapshot())).toBe('succeeded');
    expect(types(run.records)).toEqual(['message', 'tool_call_start', 'tool_result', 'message']);
    expect(toolResults(run.records)).toEqual([{ result: { ran: 'github.list_issues' } }]);
    expect(run.executed).toEqual(['c1']);
    // set once on entering `running`: tool steps inside it do not persist it again
    expect(run.statuses).toEqual(['running']);
    const end = {
      status: 'succeeded',
      reason: null,
      message: null,
      finishReason: 'end_turn',
      usage: { input_tokens: 200, output_tokens: 20 },
      costUsd: 0.02,
      turns: 2,
    };
    expect(run.ends).toEqual([end]);
    expect(run.actor.getSnapshot().output).toEqual(end);
  });

  it('a tool step with its result already skips the execution', async () => {
    const found: ToolStepOutput = { kind: 'result', outcome: { result: { tools: ['github.list_issues'] } } };
    const run = startRun({ turns: [turn('', [call('c1', 'search')]), turn('found it')], steps: { c1: found } });
    run.actor.send({ type: 'START' });
    await run.done();
    expect(run.executed).toEqual([]);
    expect(toolResults(run.records)).toEqual([{ result: { tools: ['github.list_issues'] } }]);
  });

  it('runs a write without asking when approvals are set to allow', async () => {
    const run = startRun(
      { turns: [turn('', [call('c1', 'github.create_comment')]), turn('done')], steps: { c1: execute('github.create_comment', 'write') } },
      { approvalWrite: 'allow' },
    );
    run.actor.send({ type: 'START' });
    await run.done();
    expect(run.executed).toEqual(['c1']);
    expect(run.statuses).not.toContain('awaiting_approval');
  });

  it('asks for a write, ignores another approval id, and executes once approved', async () => {
    const run = startRun({
      turns: [turn('', [call('c1', 'github.create_comment')]), turn('commented')],
      steps: { c1: execute('github.create_comment', 'write') },
    });
    run.actor.send({ type: 'START' });
    await run.awaiting();
    expect(runStatusOf(run.actor.getSnapshot())).toBe('awaiting_approval');
    expect(run.statuses).toEqual(['running', 'awaiting_approval']);
    const asked = run.records.at(-1);
    expect(asked).toEqual({
      type: 'approval_required',
      data: { approval_id: 'apr_01JTESTRUN_1', tool_call_id: 'c1', tool: 'github.create_comment', args: { q: 1 } },
    });
    run.actor.send({ type: 'APPROVE', approvalId: 'apr_other_1', by: 'usr_1' });
    expect(run.actor.getSnapshot().matches({ active: 'awaiting_approval' })).toBe(true);
    run.actor.send({ type: 'APPROVE', approvalId: 'apr_01JTESTRUN_1', by: 'usr_1' });
    await run.done();
    expect(run.executed).toEqual(['c1']);
    expect(run.records).toContainEqual({ type: 'approval_decision', data: { approval_id: 'apr_01JTESTRUN_1', decision: 'approved', decided_by: 'usr_1' } });
    expect(run.ends[0]?.status).toBe('succeeded');
  });

  it.each([
    {
      how: 'denied',
      decide: (run: ReturnType<typeof startRun>) => run.actor.send({ type: 'DENY', approvalId: 'apr_01JTESTRUN_1', by: 'usr_2' }),
      decision: 'denied',
      by: 'usr_2',
      code: 'approval_denied',
    },
    {
      how: 'not answered in time',
      decide: (run: ReturnType<typeof startRun>) => run.clock.increment(60_000),
      decision: 'timeout',
      by: null,
      code: 'approval_timeout',
    },
  ])('a write that is $how becomes a failed tool result the model reads, and the run goes on', async ({ decide, decision, by, code }) => {
    const run = startRun({
      turns: [turn('', [call('c1', 'github.create_comment')]), turn('I could not comment')],
      steps: { c1: execute('github.create_comment', 'write') },
    });
    run.actor.send({ type: 'START' });
    await run.awaiting();
    run.clock.increment(59_999);
    expect(run.actor.getSnapshot().matches({ active: 'awaiting_approval' })).toBe(true);
    decide(run);
    await run.done();
    expect(run.executed).toEqual([]);
    expect(run.records).toContainEqual({ type: 'approval_decision', data: { approval_id: 'apr_01JTESTRUN_1', decision, decided_by: by } });
    expect(toolResults(run.records)).toEqual([{ error: { code, message: expect.any(String) } }]);
    expect(run.ends[0]).toMatchObject({ status: 'succeeded', turns: 2 });
  });

  it('fails with timeout when the run outlasts timeoutMs on the clock', async () => {
    const run = startRun({ turns: ['hang'] }, { timeoutMs: 30_000 });
    run.actor.send({ type: 'START' });
    run.clock.increment(29_999);
    expect(run.actor.getSnapshot().matches('active')).toBe(true);
    run.clock.increment(1);
    await run.done();
    expect(run.ends).toEqual([
      expect.objectContaining({ status: 'failed', reason: 'timeout', message: 'the run took longer than 30000 ms', finishReason: 'error' }),
    ]);
  });

  it.each([
    { when: 'before the first turn (today is already over the cap)', input: { costCapUsd: 1, spentTodayUsd: 1.5 }, turnsAsked: 0, turns: 0 },
    { when: 'after a turn pushes today over the cap', input: { costCapUsd: 1, spentTodayUsd: 0.995 }, turnsAsked: 1, turns: 1 },
  ])('fails with cost_cap_exceeded $when', async ({ input, turnsAsked, turns }) => {
    const run = startRun({ turns: [turn('', [call('c1', 'x')]), turn('never')], steps: { c1: execute('x', 'read') } }, input);
    run.actor.send({ type: 'START' });
    await run.done();
    expect(run.turnsAsked()).toBe(turnsAsked);
    expect(run.ends).toEqual([expect.objectContaining({ status: 'failed', reason: 'cost_cap_exceeded', turns })]);
    expect(run.ends[0]?.message).toMatch(/over the cap of 1 USD/);
  });

  it('fails with max_turns when the model still calls tools at the last turn', async () => {
    const run = startRun({ turns: [turn('', [call('c1', 'x')])], steps: { c1: execute('x', 'read') } }, { maxTurns: 1 });
    run.actor.send({ type: 'START' });
    await run.done();
    expect(run.executed).toEqual([]);
    expect(run.ends).toEqual([expect.objectContaining({ status: 'failed', reason: 'max_turns', turns: 1 })]);
  });

  it('fails with the code a model turn throws, internal_error for an error without one', async () => {
    const coded = Object.assign(new Error('the provider said no'), { code: 'llm_rate_limited' });
    const first = startRun({ turns: [coded] });
    first.actor.send({ type: 'START' });
    await first.done();
    expect(first.ends).toEqual([expect.objectContaining({ status: 'failed', reason: 'llm_rate_limited', message: 'the provider said no' })]);
    const second = startRun({ turns: [new Error('boom')] });
    second.actor.send({ type: 'START' });
    await second.done();
    expect(second.ends).toEqual([expect.objectContaining({ status: 'failed', reason: 'internal_error', message: 'boom' })]);
  });

  it('turns a tool step that throws into a tool_failed result and asks the model again', async () => {
    const run = startRun({ turns: [turn('', [call('c1', 'x')]), turn('sorry')], steps: { c1: new Error('step broke') } });
    run.actor.send({ type: 'START' });
    await run.done();
    expect(toolResults(run.records)).toEqual([{ error: { code: 'tool_failed', message: 'step broke' } }]);
    expect(run.ends[0]?.status).toBe('succeeded');
  });

  it.each([
    { event: 'CANCEL' as const, value: 'cancelled', reason: 'cancelled' },
    { event: 'SHUTDOWN' as const, value: 'failed', reason: 'shutdown' },
  ])('$event before START ends the run without a turn', ({ event, value, reason }) => {
    const run = startRun({ turns: [] });
    run.actor.send({ type: event });
    expect(run.actor.getSnapshot().value).toBe(value);
    expect(run.turnsAsked()).toBe(0);
    expect(run.ends).toEqual([expect.objectContaining({ reason, turns: 0 })]);
  });

  it.each([
    {
      event: 'CANCEL' as const,
      value: 'cancelled',
      decisions: [{ type: 'approval_decision', data: { approval_id: 'apr_01JTESTRUN_1', decision: 'cancelled', decided_by: null } }],
    },
    { event: 'SHUTDOWN' as const, value: 'failed', decisions: [] },
  ])('$event while waiting for an approval ends the run at once', async ({ event, value, decisions }) => {
    const run = startRun({ turns: [turn('', [call('c1', 'w')])], steps: { c1: execute('w', 'write') } });
    run.actor.send({ type: 'START' });
    await run.awaiting();
    run.actor.send({ type: event });
    expect(run.actor.getSnapshot().value).toBe(value);
    expect(run.records.filter((entry) => entry.type === 'approval_decision')).toEqual(decisions);
    expect(run.executed).toEqual([]);
  });

  it('a CANCEL during a turn is honoured when the turn ends', async () => {
    let answer: (output: TurnOutput) => void = () => undefined;
    const pending = new Promise<TurnOutput>((resolve) => (answer = resolve));
    const run = startRun({ turns: [] });
    const machine = agentRunMachine.provide({
      actors: { llmTurn: fromPromise<TakenTurn, { runId: string; turn: number; messages: readonly ChatMessage[] }>(() => pending) },
      actions: { record: () => undefined, setStatus: () => undefined, finalize: (_args, end: RunEnd) => void run.ends.push(end) },
    });
    const actor = createActor(machine, { input: INPUT, clock: run.clock });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'CANCEL' });
    expect(actor.getSnapshot().matches('active')).toBe(true);
    answer(turn('too late', [call('c1', 'x')]));
    await waitFor(actor, (snapshot) => snapshot.status === 'done');
    expect(actor.getSnapshot().value).toBe('cancelled');
    expect(run.ends).toEqual([expect.objectContaining({ status: 'cancelled', reason: 'cancelled', finishReason: 'cancelled', turns: 1 })]);
  });

  describe('a model turn handed over (a worker performs it)', () => {
    const wait = (n: number): DeferredWait => ({ kind: 'model_turn', keys: [`${RUN_ID}.turn.${n}`] });
    const turnTaken = (snapshot: { matches: (state: object) => boolean }) => snapshot.matches({ active: 'awaiting_turn' });

    it('waits in awaiting_turn (status running), takes the result delivered for its turn once, then goes on', async () => {
      const run = startRun({ turns: [{ deferred: wait(1) }, turn('done')] });
      run.actor.send({ type: 'START' });
      await waitFor(run.actor, turnTaken);
      expect(runStatusOf(run.actor.getSnapshot())).toBe('running');
      expect(run.turnWaits).toEqual([wait(1)]);
      // a result for another turn is not this one's
      run.actor.send({ type: 'DEFERRED_TURN', key: `${RUN_ID}.turn.9`, output: turn('stray') });
      expect(turnTaken(run.actor.getSnapshot())).toBe(true);
      run.actor.send({ type: 'DEFERRED_TURN', key: `${RUN_ID}.turn.1`, output: turn('', [call('c1', 'github.list_issues')]) });
      run.actor.send({ type: 'DEFERRED_TURN', key: `${RUN_ID}.turn.1`, output: turn('twice') });
      await run.done();
      expect(run.actor.getSnapshot().value).toBe('succeeded');
      expect(run.actor.getSnapshot().context.turnWait).toBeNull();
      expect(run.ends[0]).toMatchObject({ turns: 2, costUsd: 0.02 });
      expect(run.records.filter((entry) => entry.type === 'message').map((entry) => (entry.data as { content: string }).content)).toEqual(['', 'done']);
    });

    it('fails with the reason of a turn that could not be performed; a CANCEL ends the wait at once', async () => {
      const failed = startRun({ turns: [{ deferred: wait(1) }] });
      failed.actor.send({ type: 'START' });
      await waitFor(failed.actor, turnTaken);
      failed.actor.send({ type: 'DEFERRED_TURN', key: `${RUN_ID}.turn.1`, failure: { reason: 'llm_provider_error', message: 'refused' } });
      await failed.done();
      expect(failed.ends).toEqual([expect.objectContaining({ status: 'failed', reason: 'llm_provider_error', turns: 0 })]);

      const cancelled = startRun({ turns: [{ deferred: wait(1) }] });
      cancelled.actor.send({ type: 'START' });
      await waitFor(cancelled.actor, turnTaken);
      cancelled.actor.send({ type: 'CANCEL' });
      await cancelled.done();
      expect(cancelled.ends).toEqual([expect.objectContaining({ status: 'cancelled', turns: 0 })]);
    });

    it('a run parked on its turn comes back in `parked` and takes the turn there', async () => {
      const first = startRun({ turns: [{ deferred: wait(1) }] });
      first.actor.send({ type: 'START' });
      await waitFor(first.actor, turnTaken);
      const context = first.actor.getSnapshot().context;
      first.actor.stop();
      const back = startRun({ turns: [] }, { resumeFrom: JSON.parse(JSON.stringify(context)) as typeof context });
      back.actor.send({ type: 'START' });
      expect(back.actor.getSnapshot().matches({ active: 'parked' })).toBe(true);
      expect(runStatusOf(back.actor.getSnapshot())).toBe('running');
      back.actor.send({ type: 'DEFERRED_TURN', key: `${RUN_ID}.turn.1`, output: turn('back') });
      await back.done();
      expect(back.ends).toEqual([expect.objectContaining({ status: 'succeeded', turns: 1 })]);
      expect(back.turnsAsked()).toBe(0);
    });
  });
});
