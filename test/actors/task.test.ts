/**
 * The task machine driven directly on XState's SimulatedClock: cron fires as
 * delayed transitions (including a far occurrence reached in capped timer
 * steps), the run slots and the bounded FIFO of pending fires. Asserts the
 * states and the effects it names (launch, refuse, cancelPending, scheduledFire).
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { taskMachine, taskStateOf, type TaskMachineInput } from '../../actors/task.machine.js';
import { nextOccurrence } from '../../domains/tasks/schedule.js';

const at = (iso: string): number => Date.parse(iso);
/** the longest timer Node keeps, the machine's step for far occurrences */
const MAX_TIMER_MS = 2_147_483_647;

type Effect = { readonly effect: string; readonly params: unknown };

function startTask(input: Partial<TaskMachineInput>, startIso = '2026-03-02T08:58:30Z') {
  const clock = new SimulatedClock();
  clock.set(at(startIso));
  const effects: Effect[] = [];
  const keep = (effect: string) => (_args: unknown, params: unknown) => void effects.push({ effect, params });
  const machine = taskMachine.provide({
    actions: { launch: keep('launch'), refuse: keep('refuse'), cancelPending: keep('cancelPending'), scheduledFire: keep('scheduledFire') },
  });
  const actor = createActor(machine, {
    clock,
    input: {
      taskId: 'tsk_1',
      cron: null,
      timezone: 'UTC',
      maxConcurrentRuns: 1,
      maxPending: 2,
      lastFiredAt: null,
      pending: [],
      now: () => clock.now(),
      nextOccurrence,
      ...input,
    },
  });
  actor.start();
  const state = () => taskStateOf(actor.getSnapshot());
  const context = () => actor.getSnapshot().context;
  /** the effects named since the last call */
  const drain = (): Effect[] => effects.splice(0);
  return { actor, clock, state, context, drain };
}

const fires = (...isos: string[]): Effect[] => isos.map((iso) => ({ effect: 'scheduledFire', params: { occurrence: at(iso) } }));

describe('task machine: schedule', () => {
  it('fires at each cron occurrence on the clock and waits for the next one', () => {
    const task = startTask({ cron: '* * * * *' });
    expect(task.state()).toBe('scheduled');
    expect(task.context().nextAt).toBe(at('2026-03-02T08:59:00Z'));
    task.clock.increment(29_999);
    expect(task.drain()).toEqual([]);
    task.clock.increment(1);
    expect(task.drain()).toEqual(fires('2026-03-02T08:59:00Z'));
    expect(task.context()).toMatchObject({ lastFiredAt: at('2026-03-02T08:59:00Z'), nextAt: at('2026-03-02T09:00:00Z') });
    task.clock.increment(60_000);
    expect(task.drain()).toEqual(fires('2026-03-02T09:00:00Z'));
  });

  it('never fires an occurrence already fired when the clock stands behind it (a restart on a clock that moved back)', () => {
    const task = startTask({ cron: '* * * * *', lastFiredAt: at('2026-03-02T09:00:00Z') }, '2026-03-02T08:58:50Z');
    expect(task.context().nextAt).toBe(at('2026-03-02T09:01:00Z'));
    task.clock.increment(70_000); // 09:00:00
    expect(task.drain()).toEqual([]);
    task.clock.increment(60_000); // 09:01:00
    expect(task.drain()).toEqual(fires('2026-03-02T09:01:00Z'));
  });

  it('reaches a far occurrence in capped timer steps, firing only when it is due', () => {
    const task = startTask({ cron: '0 0 1 1 *' }, '2026-02-01T00:00:00Z');
    expect(task.context().nextAt).toBe(at('2027-01-01T00:00:00Z'));
    task.clock.increment(MAX_TIMER_MS);
    expect(task.drain()).toEqual([]);
    expect(task.state()).toBe('scheduled');
    const due = at('2027-01-01T00:00:00Z');
    while (task.clock.now() < due) task.clock.increment(Math.min(MAX_TIMER_MS, due - task.clock.now()));
    expect(task.drain()).toEqual(fires('2027-01-01T00:00:00Z'));
    expect(task.context().nextAt).toBe(at('2028-01-01T00:00:00Z'));
  });

  it('listens without a cron, and with a cron that never occurs (30 February)', () => {
    expect(startTask({ cron: null }).state()).toBe('listening');
    expect(startTask({ cron: '0 0 30 2 *' }).state()).toBe('listening');
  });

  it('UPDATE to a cron schedules it; UPDATE to none stops the timer', () => {
    const task = startTask({ cron: null });
    task.actor.send({ type: 'UPDATE', cron: '*/5 * * * *', timezone: 'UTC', maxConcurrentRuns: 1 });
    expect(task.state()).toBe('scheduled');
    expect(task.context().nextAt).toBe(at('2026-03-02T09:00:00Z'));
    task.actor.send({ type: 'UPDATE', cron: null, timezone: 'UTC', maxConcurrentRuns: 1 });
    expect(task.state()).toBe('listening');
    task.clock.increment(3_600_000);
    expect(task.drain()).toEqual([]);
  });
});

describe('task machine: run slots and pending fires', () => {
  it('launches up to max_concurrent_runs, queues the rest in order up to the bound, refuses beyond it', () => {
    const task = startTask({ maxConcurrentRuns: 1, maxPending: 2 });
    for (const runId of ['r1', 'r2', 'r3', 'r4']) task.actor.send({ type: 'FIRE', runId });
    expect(task.drain()).toEqual([
      { effect: 'launch', params: { runId: 'r1' } },
      { effect: 'refuse', params: { runId: 'r4' } },
    ]);
    expect(task.context()).toMatchObject({ running: ['r1'], pending: ['r2', 'r3'] });
    task.actor.send({ type: 'RUN_ENDED', runId: 'r1' });
    expect(task.drain()).toEqual([{ effect: 'launch', params: { runId: 'r2' } }]);
    expect(task.context()).toMatchObject({ running: ['r2'], pending: ['r3'] });
  });

  it('cancels one pending fire on CANCEL_PENDING and ignores a run that is not pending', () => {
    const task = startTask({ maxConcurrentRuns: 1 });
    for (const runId of ['r1', 'r2', 'r3']) task.actor.send({ type: 'FIRE', runId });
    task.drain();
    task.actor.send({ type: 'CANCEL_PENDING', runId: 'r1' });
    expect(task.drain()).toEqual([]);
    task.actor.send({ type: 'CANCEL_PENDING', runId: 'r2' });
    expect(task.drain()).toEqual([{ effect: 'cancelPending', params: { runIds: ['r2'] } }]);
    expect(task.context().pending).toEqual(['r3']);
  });

  it('starts the fires a previous process left pending first, in order', () => {
    const task = startTask({ maxConcurrentRuns: 2, pending: ['p1', 'p2', 'p3'] });
    expect(task.drain()).toEqual([
      { effect: 'launch', params: { runId: 'p1' } },
      { effect: 'launch', params: { runId: 'p2' } },
    ]);
    expect(task.context()).toMatchObject({ running: ['p1', 'p2'], pending: ['p3'] });
  });

  it("reads the cron in the task's zone, daylight saving included, and UPDATE can change the zone", () => {
    const task = startTask({ cron: '0 9 * * *', timezone: 'America/New_York' });
    // 2026-03-02 is EST (UTC-5): 09:00 local is 14:00Z
    expect(task.context().nextAt).toBe(at('2026-03-02T14:00:00Z'));
    task.actor.send({ type: 'UPDATE', cron: '0 9 * * *', timezone: 'Europe/Paris', maxConcurrentRuns: 1 });
    // 2026-03-02 in Paris is CET (UTC+1), already past 09:00 local at 08:58Z: the next day
    expect(task.context().nextAt).toBe(at('2026-03-03T08:00:00Z'));
  });

  it('UPDATE with more slots launches pending fires at once', () => {
    const task = startTask({ maxConcurrentRuns: 1, maxPending: 5 });
    for (const runId of ['r1', 'r2', 'r3']) task.actor.send({ type: 'FIRE', runId });
    task.drain();
    task.actor.send({ type: 'UPDATE', cron: null, timezone: 'UTC', maxConcurrentRuns: 3 });
    expect(task.drain()).toEqual([
      { effect: 'launch', params: { runId: 'r2' } },
      { effect: 'launch', params: { runId: 'r3' } },
    ]);
    expect(task.context()).toMatchObject({ running: ['r1', 'r2', 'r3'], pending: [], maxConcurrentRuns: 3 });
  });

  it.each([
    { event: 'STOP' as const, effects: [{ effect: 'cancelPending', params: { runIds: ['r2', 'r3'] } }] },
    { event: 'SHUTDOWN' as const, effects: [] },
  ])('$event ends the actor and its timer; only STOP cancels the pending fires (SHUTDOWN keeps them stored)', ({ event, effects }) => {
    const task = startTask({ cron: '* * * * *', maxConcurrentRuns: 1 });
    for (const runId of ['r1', 'r2', 'r3']) task.actor.send({ type: 'FIRE', runId });
    task.drain();
    task.actor.send({ type: event });
    expect(task.drain()).toEqual(effects);
    expect(task.state()).toBe('stopped');
    expect(task.actor.getSnapshot().status).toBe('done');
    task.clock.increment(3_600_000);
    expect(task.drain()).toEqual([]);
  });
});
