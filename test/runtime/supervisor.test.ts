/**
 * The supervisor with machines of its own kinds (the way task, binding and
 * worker actors will plug in): registry, failure policies, the injected clock,
 * shutdown with a grace period. Time is XState's SimulatedClock: nothing sleeps.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock, assign, setup } from 'xstate';
import { createLogger } from '../../runtime/logger.js';
import { loadConfig } from '../../runtime/config.js';
import { Supervisor, SupervisorClosedError, type ActorInfo } from '../../runtime/supervisor.js';

const logger = createLogger(loadConfig({ LOG_LEVEL: 'silent', JWT_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/supervisor-test' }));

/** `idle` -> `working`; BOOM throws in an action; SHUTDOWN goes to `done` unless stubborn; `after` 1000 ms -> `timed_out`. */
const worker = setup({
  types: { input: {} as { stubborn: boolean }, context: {} as { stubborn: boolean; booms: number }, events: {} as { type: 'WORK' | 'BOOM' | 'SHUTDOWN' } },
  actions: {
    explode: () => {
      throw new Error('boom');
    },
  },
  guards: { polite: ({ context }) => !context.stubborn },
}).createMachine({
  id: 'worker',
  initial: 'idle',
  context: ({ input }) => ({ stubborn: input.stubborn, booms: 0 }),
  on: {
    BOOM: { actions: [assign({ booms: ({ context }) => context.booms + 1 }), 'explode'] },
    SHUTDOWN: { guard: 'polite', target: '.done' },
  },
  states: {
    idle: { on: { WORK: 'working' } },
    working: { after: { 1000: 'timed_out' } },
    timed_out: {},
    done: { type: 'final' },
  },
});

function harness(policy: { onFailure: 'restart'; maxRestarts: number } | { onFailure: 'fail' }) {
  const clock = new SimulatedClock();
  const supervisor = new Supervisor({ clock, logger, shutdownGraceMs: 5000 });
  const failed: { info: ActorInfo; error: string }[] = [];
  const abandoned: string[] = [];
  let drained = 0;
  const workers = supervisor.registerKind({
    kind: 'worker',
    logic: worker,
    policy,
    shutdownEvent: { type: 'SHUTDOWN' },
    onFailed: (info, error) => {
      failed.push({ info, error: (error as Error).message });
    },
    onAbandoned: (info) => {
      abandoned.push(info.id);
    },
    drain: async () => {
      drained += 1;
    },
  });
  return { clock, supervisor, workers, failed, abandoned, drained: () => drained };
}

describe('supervisor', () => {
  it('keeps a registry of live actors: kind, state, start time, parent, organization filter', () => {
    const { supervisor, workers, clock } = harness({ onFailure: 'fail' });
    clock.set(Date.UTC(2030, 0, 2, 3, 4, 5));
    workers.spawn({ id: 'a1', input: { stubborn: false }, orgId: 'org_a' });
    workers.spawn({ id: 'a2', input: { stubborn: false }, orgId: 'org_b', parent: 'a1' });
    workers.send('a2', { type: 'WORK' });
    expect(supervisor.list()).toEqual([
      { id: 'a1', kind: 'worker', state: 'idle', status: 'running', started_at: '2030-01-02T03:04:05.000Z', parent: null, restarts: 0, org_id: 'org_a' },
      { id: 'a2', kind: 'worker', state: 'working', status: 'running', started_at: '2030-01-02T03:04:05.000Z', parent: 'a1', restarts: 0, org_id: 'org_b' },
    ]);
    expect(supervisor.list({ orgId: 'org_b' }).map((actor) => actor.id)).toEqual(['a2']);
    expect(supervisor.list({ kind: 'other' })).toEqual([]);
    expect(() => workers.spawn({ id: 'a1', input: { stubborn: false } })).toThrow('actor a1 already exists');
    // a handle reaches only its own kind's actors; snapshots are typed by the machine
    const others = supervisor.registerKind({ kind: 'other', logic: worker, policy: { onFailure: 'fail' } });
    expect(others.send('a1', { type: 'WORK' })).toBe(false);
    expect(others.snapshot('a1')).toBeUndefined();
    expect(workers.snapshot('a2')?.context).toEqual({ stubborn: false, booms: 0 });
    expect(() => supervisor.registerKind({ kind: 'worker', logic: worker, policy: { onFailure: 'fail' } })).toThrow('already registered');
  });

  it('runs delayed transitions on the injected clock', () => {
    const { supervisor, workers, clock } = harness({ onFailure: 'fail' });
    workers.spawn({ id: 't1', input: { stubborn: false } });
    workers.send('t1', { type: 'WORK' });
    clock.increment(999);
    expect(supervisor.info('t1')?.state).toBe('working');
    clock.increment(1);
    expect(supervisor.info('t1')?.state).toBe('timed_out');
  });

  it('restarts a failing actor from its input, at most maxRestarts times, then fails it', async () => {
    const { supervisor, workers, failed } = harness({ onFailure: 'restart', maxRestarts: 2 });
    workers.spawn({ id: 'r1', input: { stubborn: false } });
    workers.send('r1', { type: 'WORK' });
    workers.send('r1', { type: 'BOOM' });
    // restarted: back at its initial state, counted
    expect(supervisor.info('r1')).toMatchObject({ state: 'idle', restarts: 1 });
    workers.send('r1', { type: 'BOOM' });
    expect(supervisor.info('r1')).toMatchObject({ state: 'idle', restarts: 2 });
    workers.send('r1', { type: 'BOOM' });
    await supervisor.whenFinished('r1');
    expect(supervisor.info('r1')).toBeUndefined();
    expect(failed).toEqual([{ info: expect.objectContaining({ id: 'r1', kind: 'worker', restarts: 2 }), error: 'boom' }]);
  });

  it('fails an actor of a `fail` kind at its first error, without restarting it', async () => {
    const { supervisor, workers, failed } = harness({ onFailure: 'fail' });
    workers.spawn({ id: 'f1', input: { stubborn: false } });
    workers.send('f1', { type: 'BOOM' });
    await supervisor.whenFinished('f1');
    expect(supervisor.size).toBe(0);
    expect(failed.map((entry) => [entry.info.id, entry.info.restarts, entry.error])).toEqual([['f1', 0, 'boom']]);
  });

  it('on shutdown refuses new actors, lets actors reach a safe point, stops the rest after the grace period', async () => {
    const { supervisor, workers, clock, abandoned, drained } = harness({ onFailure: 'fail' });
    workers.spawn({ id: 's1', input: { stubborn: false } });
    workers.spawn({ id: 's2', input: { stubborn: true } });
    const closing = supervisor.shutdown();
    expect(() => workers.spawn({ id: 's3', input: { stubborn: false } })).toThrow(SupervisorClosedError);
    await supervisor.whenFinished('s1');
    // the polite one reached its final state; the stubborn one is still there, marked stopping
    expect(supervisor.list().map((actor) => [actor.id, actor.status])).toEqual([['s2', 'stopping']]);
    expect(abandoned).toEqual([]);
    clock.increment(5000);
    await closing;
    expect(abandoned).toEqual(['s2']);
    expect(supervisor.size).toBe(0);
    expect(drained()).toBe(1);
    // idempotent
    await supervisor.shutdown();
    expect(drained()).toBe(1);
  });

  it('finishes shutdown without waiting for the grace period when every actor reaches a safe point', async () => {
    const { supervisor, workers, abandoned } = harness({ onFailure: 'fail' });
    workers.spawn({ id: 'p1', input: { stubborn: false } });
    workers.spawn({ id: 'p2', input: { stubborn: false } });
    await supervisor.shutdown();
    expect(abandoned).toEqual([]);
    expect(supervisor.size).toBe(0);
  });
});
