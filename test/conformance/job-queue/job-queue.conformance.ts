/**
 * The job queue conformance kit: every `JobQueue` implementation runs these
 * same cases (test/conformance/job-queue/job-queue.test.ts). A harness says
 * how time passes for its queue: the in-process queue runs on a simulated
 * clock the kit moves; JetStream leases lapse on the server, so its harness
 * sleeps past a short `AckWait`.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobQueue, JobSpec, QueueName } from '../../../runtime/jobs/queue.js';
import { eventually } from '../../helpers/eventually.js';

export interface JobQueueHarness {
  readonly queue: JobQueue;
  readonly leaseMs: number;
  readonly maxDeliver: number;
  /** let `ms` pass on the queue's clock */
  pass(ms: number): Promise<void>;
  /** how long a claim may wait for a redelivery (0 where time moves only when the kit moves it) */
  readonly redeliveryWaitMs: number;
  /** the keep period of settled jobs the queue was opened with */
  readonly keepMs: number;
  /** writes a job as enqueue does but loses its publish (a crash between the two steps); absent where enqueue is one step */
  readonly enqueueLost?: (spec: JobSpec) => Promise<void>;
  dispose(): Promise<void>;
}

/** fences compare as dotted tuples of integers: `3` < `5`, `7.1` < `7.2` */
function fenceLess(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  }
  return false;
}

export function describeJobQueue(name: string, open: () => Promise<JobQueueHarness>): void {
  describe(`job queue conformance: ${name}`, () => {
    let h: JobQueueHarness;
    let q: JobQueue;
    const spec = (queue: QueueName = 'ingest', payload: Record<string, unknown> = { n: 1 }): JobSpec => ({
      id: `job_${randomBytes(6).toString('hex')}`,
      queue,
      orgId: 'org_1',
      kind: 'ingest_body',
      payload,
    });
    const claimOne = async (worker: string, queues: QueueName[] = ['ingest']) => {
      const leases = await q.claim(worker, queues, { waitMs: h.redeliveryWaitMs });
      expect(leases).toHaveLength(1);
      return leases[0]!;
    };
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code?: string; message?: string }) => e.code ?? e.message,
      );

    beforeEach(async () => {
      h = await open();
      q = h.queue;
    });
    afterEach(async () => h.dispose());

    it('enqueue is idempotent by id', async () => {
      const job = spec();
      const first = await q.enqueue(job);
      const again = await q.enqueue({ ...job, payload: { n: 2 } });
      expect(first).toMatchObject({ id: job.id, state: 'pending', deliveries: 0, payload: { n: 1 }, result: null, error: null });
      expect(again).toMatchObject({ id: job.id, payload: { n: 1 } });
      expect((await q.stats()).ingest.depth).toBe(1);
      expect(await q.claim('w1', ['ingest'], { max: 5 })).toHaveLength(1);
    });

    it('claim leases a job to one worker', async () => {
      const job = await q.enqueue(spec());
      const lease = await claimOne('w1');
      expect(lease).toMatchObject({
        job: { id: job.id, queue: 'ingest', orgId: 'org_1', kind: 'ingest_body', payload: { n: 1 } },
        delivery: 1,
        workerId: 'w1',
      });
      expect(lease.expiresAt).toBeGreaterThan(Date.now() - 60_000 > lease.expiresAt ? 0 : lease.expiresAt - h.leaseMs - 1);
      expect(await q.get(job.id)).toMatchObject({ state: 'leased', deliveries: 1 });
      expect(await q.claim('w2', ['ingest'])).toEqual([]);
      const stats = (await q.stats()).ingest;
      expect(stats).toMatchObject({ depth: 0, inflight: 1 });
    });

    it('renew extends the lease past its first expiry', async () => {
      const job = await q.enqueue(spec());
      const lease = await claimOne('w1');
      await h.pass(h.leaseMs * 0.6);
      const renewed = await q.renew(job.id, lease.fence);
      expect(renewed.fence).toBe(lease.fence);
      expect(renewed.expiresAt).toBeGreaterThan(lease.expiresAt);
      await h.pass(h.leaseMs * 0.6);
      expect(await q.claim('w2', ['ingest'])).toEqual([]);
      expect(await q.complete(job.id, lease.fence, { ok: true })).toMatchObject({ state: 'done', result: { ok: true } });
    });

    it('a lapsed lease redelivers with a larger fence; the stale holder is refused', async () => {
      const job = await q.enqueue(spec());
      const first = await claimOne('w1');
      await h.pass(h.leaseMs + 200);
      const second = await claimOne('w2');
      expect(second.delivery).toBe(2);
      expect(fenceLess(first.fence, second.fence)).toBe(true);
      expect(await code(q.complete(job.id, first.fence, { from: 'w1' }))).toBe('lease_lost');
      expect(await code(q.fail(job.id, first.fence, 'late'))).toBe('lease_lost');
      expect(await code(q.renew(job.id, first.fence))).toBe('lease_lost');
      expect(await q.complete(job.id, second.fence, { from: 'w2' })).toMatchObject({ state: 'done', result: { from: 'w2' }, deliveries: 2 });
      expect((await q.stats()).ingest.redelivered).toBeGreaterThanOrEqual(1);
    });

    it('a job has one result only', async () => {
      const job = await q.enqueue(spec());
      const lease = await claimOne('w1');
      await q.complete(job.id, lease.fence, { n: 1 });
      expect(await code(q.complete(job.id, lease.fence, { n: 2 }))).toBe('lease_lost');
      expect(await code(q.fail(job.id, lease.fence, 'after'))).toBe('lease_lost');
      expect(await q.get(job.id)).toMatchObject({ state: 'done', result: { n: 1 }, error: null });
      expect(await q.enqueue(spec())).toMatchObject({ state: 'pending' });
      expect(await q.enqueue({ ...job, payload: {} })).toMatchObject({ state: 'done' });
    });

    it('fail gives the job back for another delivery', async () => {
      const job = await q.enqueue(spec());
      const first = await claimOne('w1');
      expect(await q.fail(job.id, first.fence, 'boom')).toMatchObject({ state: 'pending', error: 'boom' });
      const second = await claimOne('w2');
      expect(second.delivery).toBe(2);
      expect(fenceLess(first.fence, second.fence)).toBe(true);
    });

    it('after maxDeliver failures the job goes to the dead letters with its error', async () => {
      const job = await q.enqueue(spec('agent'));
      for (let i = 1; i <= h.maxDeliver; i += 1) {
        const lease = await claimOne(`w${i}`, ['agent']);
        expect(lease.delivery).toBe(i);
        await q.fail(job.id, lease.fence, `boom ${i}`);
      }
      expect(await q.get(job.id)).toMatchObject({ state: 'dead', error: `boom ${h.maxDeliver}`, deliveries: h.maxDeliver });
      const dead = await q.deadLetters('agent');
      expect(dead.map((d) => d.id)).toEqual([job.id]);
      expect(dead[0]?.error).toBe(`boom ${h.maxDeliver}`);
      expect((await q.stats()).agent).toMatchObject({ depth: 0, inflight: 0, deadLetters: 1 });
      expect(await q.claim('w9', ['agent'])).toEqual([]);
      expect(await q.deadLetters('ingest')).toEqual([]);
    });

    it('a job whose last delivery lapses goes to the dead letters', async () => {
      const job = await q.enqueue(spec('voice'));
      for (let i = 1; i <= h.maxDeliver; i += 1) {
        expect((await claimOne(`w${i}`, ['voice'])).delivery).toBe(i);
        await h.pass(h.leaseMs + 200);
      }
      // workers keep pulling: on JetStream the max-deliveries advisory fires when the consumer next looks for work
      const dead = await eventually(
        async () => {
          expect(await q.claim('w0', ['voice'])).toEqual([]);
          const info = await q.get(job.id);
          return info?.state === 'dead' ? info : undefined;
        },
        { what: 'the job in the dead letters' },
      );
      expect(dead.error).toMatch(/lapse/);
      expect((await q.deadLetters('voice')).map((d) => d.id)).toEqual([job.id]);
    });

    it('stats count depth, inflight and the age of the oldest pending job', async () => {
      const empty = (await q.stats()).render;
      expect(empty).toEqual({ depth: 0, inflight: 0, oldestPendingS: null, redelivered: 0, deadLetters: 0 });
      await q.enqueue(spec('render'));
      await q.enqueue(spec('render'));
      await h.pass(1_100);
      const before = (await q.stats()).render;
      expect(before).toMatchObject({ depth: 2, inflight: 0 });
      expect(before.oldestPendingS).toBeGreaterThanOrEqual(1);
      await claimOne('w1', ['render']);
      expect((await q.stats()).render).toMatchObject({ depth: 1, inflight: 1 });
      expect(Object.keys(await q.stats()).sort()).toEqual(['agent', 'graph-maintenance', 'ingest', 'render', 'voice']);
    });

    it('settled() resolves once the job is done', async () => {
      const job = await q.enqueue(spec());
      const waiting = q.settled(job.id);
      const lease = await claimOne('w1');
      await q.complete(job.id, lease.fence, { answer: 42 });
      expect(await waiting).toMatchObject({ id: job.id, state: 'done', result: { answer: 42 } });
      expect(await q.settled(job.id)).toMatchObject({ state: 'done' });
      expect(await code(q.settled('job_unknown'))).toBe('not_found');
    });

    it('a claim already waiting gets a job enqueued or failed back meanwhile (no lost wake-up)', async () => {
      const waiting = q.claim('w1', ['render'], { waitMs: 10_000 });
      const job = await q.enqueue(spec('render'));
      const [lease] = await waiting;
      expect(lease?.job.id).toBe(job.id);
      // a claim answered to a worker that went away gives its lease back; a claim waiting meanwhile takes it
      const next = q.claim('w2', ['render'], { waitMs: 10_000 });
      await q.fail(job.id, lease!.fence, 'the worker went away before its claim was answered');
      expect((await next).map((l) => [l.job.id, l.delivery])).toEqual([[job.id, 2]]);
    });

    it('forgets a settled job after the keep period and keeps an unsettled one', async () => {
      const done = await q.enqueue(spec('render'));
      await q.complete(done.id, (await claimOne('w1', ['render'])).fence, { ok: true });
      const kept = await q.enqueue(spec('render'));
      for (let i = 0; i < 3; i += 1) {
        await h.pass(h.keepMs * 0.4);
        await q.sweep();
      }
      await eventually(async () => ((await q.get(done.id)) === null ? true : undefined), { what: 'the settled job forgotten' });
      expect(await q.get(kept.id)).toMatchObject({ state: 'pending', deliveries: 0 });
      expect((await claimOne('w2', ['render'])).job.id).toBe(kept.id);
    });

    it('publishes again a job whose publish was lost after its ledger write (enqueue again, and the sweep)', async (test) => {
      if (!h.enqueueLost) return test.skip();
      const retried = spec('voice');
      await h.enqueueLost(retried);
      expect(await q.get(retried.id)).toMatchObject({ state: 'pending' });
      expect(await q.claim('w1', ['voice'])).toEqual([]);
      expect(await q.enqueue(retried)).toMatchObject({ state: 'pending' });
      expect((await claimOne('w1', ['voice'])).job.id).toBe(retried.id);
      const swept = spec('voice');
      await h.enqueueLost(swept);
      expect((await q.sweep()).republished).toBe(1);
      expect((await q.sweep()).republished).toBe(0);
      const lease = await claimOne('w2', ['voice']);
      expect(lease).toMatchObject({ job: { id: swept.id }, delivery: 1 });
      expect(await q.claim('w3', ['voice'])).toEqual([]);
    });

    it('queues are isolated from each other', async () => {
      const job = await q.enqueue(spec('graph-maintenance'));
      expect(await q.claim('w1', ['ingest', 'agent'])).toEqual([]);
      const lease = await claimOne('w1', ['ingest', 'graph-maintenance']);
      expect(lease.job.id).toBe(job.id);
      expect(await q.get('job_unknown')).toBeNull();
    });

    it('refuses work once closed', async () => {
      await q.close();
      expect(await code(q.enqueue(spec()))).toBe('service_unavailable');
      await q.close();
    });
  });
}
