/**
 * Real worker processes (`node --import tsx worker.ts`) against the gateway:
 * a job done with one effect; a worker SIGKILLed mid-job, finished by another
 * after the (2 s) lease with one effect; a worker stopped past its lease
 * (SIGSTOP/SIGCONT) whose late result is refused 409 lease_lost; a poison
 * job in the dead letters after maxDeliver, visible in /workers/status.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JobInfo } from '../../runtime/jobs/queue.js';
import { eventually } from '../helpers/eventually.js';
import { useOneOrg } from '../helpers/suite.js';
import { startWorker, TEST_HANDLERS, type WorkerProcess, WORKERS_ENV } from './helpers.js';

describe('worker processes', { timeout: 120_000 }, () => {
  const ctx = useOneOrg(WORKERS_ENV);
  const started: WorkerProcess[] = [];
  const effects: JobInfo[] = [];
  let registered = false;
  const suffix = Date.now().toString(36);

  const worker = (queue: string): WorkerProcess => {
    const process = startWorker(ctx.server.url, ['--queues', queue, '--handlers', TEST_HANDLERS]);
    started.push(process);
    return process;
  };
  const enqueue = (id: string, queue: 'render' | 'voice' | 'graph-maintenance', kind: string, payload: Record<string, unknown>) => {
    const { workers } = ctx.server.service.services;
    if (!registered) {
      registered = true;
      // the gateway side of a job's effect: what `complete` applies, once
      workers.onComplete('test_sleep', (job) => Promise.resolve(void effects.push(job)));
    }
    return workers.queue.enqueue({ id: `${id}-${suffix}`, queue, orgId: ctx.owner.organization.id, kind, payload });
  };
  const job = async (id: string): Promise<JobInfo | null> => ctx.server.service.services.workers.queue.get(`${id}-${suffix}`);
  const effectsOf = (id: string) => effects.filter((entry) => entry.id === `${id}-${suffix}`);

  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.kill()));
  });

  it('runs a job on a worker and applies its effect once', async () => {
    const one = worker('render');
    await one.logged('worker registered');
    await enqueue('plain', 'render', 'test_sleep', { ms: 10 });
    await one.logged('job completed', { job_id: `plain-${suffix}` });
    const done = await job('plain');
    expect(done).toMatchObject({ state: 'done', deliveries: 1 });
    expect(effectsOf('plain')).toHaveLength(1);
  });

  it('lets a second worker finish a job after the first is SIGKILLed mid-job, with one effect', async () => {
    const first = worker('render');
    await first.logged('worker registered');
    await enqueue('killed', 'render', 'test_sleep', { first_ms: 60_000, ms: 0 });
    const startedLine = await first.logged('job started', { job_id: `killed-${suffix}` });
    // the second worker is up before the first dies, so the wait below is the lease, not a process start
    const second = worker('render');
    await second.logged('worker registered');
    await first.kill();
    // the job comes back only once the first worker's lease lapses
    const redelivered = await second.logged('job started', { job_id: `killed-${suffix}` });
    expect(redelivered['delivery']).toBeGreaterThan(1);
    expect(redelivered['fence']).not.toBe(startedLine['fence']);
    await second.logged('job completed', { job_id: `killed-${suffix}` });
    expect(await job('killed')).toMatchObject({ state: 'done', result: { delivery: redelivered['delivery'] } });
    expect(effectsOf('killed')).toHaveLength(1);
  });

  it('refuses the late result of a worker stopped past its lease (409 lease_lost) and applies one effect', async () => {
    const late = worker('voice');
    await late.logged('worker registered');
    // the first delivery outlasts a loaded machine's worker start; stopped at once, the worker holds it past its lease
    // (it used to sleep 1.5 s and be stopped only once the second worker was up: under load it had finished by then)
    await enqueue('late', 'voice', 'test_sleep', { first_ms: 10_000, ms: 0 });
    const startedLine = await late.logged('job started', { job_id: `late-${suffix}` });
    late.child.kill('SIGSTOP');
    const other = worker('voice');
    await other.logged('worker registered');
    const redelivered = await other.logged('job started', { job_id: `late-${suffix}` });
    expect(redelivered['delivery']).toBeGreaterThan(1);
    expect(redelivered['fence']).not.toBe(startedLine['fence']);
    await other.logged('job completed', { job_id: `late-${suffix}` });
    late.child.kill('SIGCONT');
    await late.logged('lease lost; the job is abandoned', { job_id: `late-${suffix}`, code: 'lease_lost' });
    expect(late.logs.some((entry) => entry['msg'] === 'job completed')).toBe(false);
    const done = await job('late');
    expect(done).toMatchObject({ state: 'done', result: { delivery: redelivered['delivery'] } });
    expect(effectsOf('late')).toHaveLength(1);
  });

  it('puts a poison job in the dead letters after maxDeliver, visible in /workers/status', async () => {
    const one = worker('graph-maintenance');
    await one.logged('worker registered');
    // a JetStream queue outlives the suite: count what this test adds
    const before = (await ctx.server.request('GET', '/workers/status', { token: ctx.owner.token })).body.queues['graph-maintenance'];
    await enqueue('poison', 'graph-maintenance', 'test_poison', {});
    const dead = await eventually(async () => ((await job('poison'))?.state === 'dead' ? await job('poison') : undefined), { what: 'the poison job dead' });
    expect(dead?.deliveries).toBe(5);
    expect(dead?.error).toMatch(/poison/);
    const status = await ctx.server.request('GET', '/workers/status', { token: ctx.owner.token });
    const after = status.body.queues['graph-maintenance'];
    expect(after).toMatchObject({ dead_letters: before.dead_letters + 1, depth: 0, inflight: 0 });
    expect(after.redelivered - before.redelivered).toBeGreaterThanOrEqual(4);
  });

  it('drains on SIGTERM: the job in hand completes, then the process exits 0', async () => {
    const one = worker('render');
    await one.logged('worker registered');
    await enqueue('drain', 'render', 'test_sleep', { ms: 500 });
    await one.logged('job started', { job_id: `drain-${suffix}` });
    one.child.kill('SIGTERM');
    expect(await one.exited).toBe(0);
    expect((await job('drain'))?.state).toBe('done');
  });
});
