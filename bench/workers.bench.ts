/**
 * `npm run bench:workers`: the job queue on JetStream (`NATS_URL`, default nats://127.0.0.1:4222)
 * against raw JetStream on the same server in the same run.
 *
 * - `jobs_per_s`: N jobs enqueued (64 in flight), then claimed 100 at a time and completed (each batch's
 *   completes in parallel): enqueue + claim + complete through `JetStreamJobQueue`, ledger included.
 * - `raw_msgs_per_s`: what `nats bench` measures: N messages published to a plain stream (64 in flight),
 *   then consumed by a durable pull consumer and acked.
 * - `ratio` = jobs_per_s / raw_msgs_per_s (target >= 0.5).
 * - `death_to_pickup_ms`: a worker claims a job and stops renewing (its death); the time until another
 *   claimer gets the job, with `lease_ms` as the lease (target: lease + 1 s). Median of 3.
 * Streams use a unique prefix and are deleted at the end. `--quick` runs under a minute.
 */
import { randomBytes } from 'node:crypto';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { systemClock } from '../runtime/clock.js';
import { JetStreamJobQueue } from '../runtime/jobs/jetstream-queue.js';
import { QUICK, printSummary } from './lib.js';

const URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const N = QUICK ? 2_000 : 20_000;
const IN_FLIGHT = 64;
const LEASE_MS = 1_000;
const prefix = `bench_${randomBytes(3).toString('hex')}`;

async function inParallel(count: number, width: number, run: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await run(next++);
    }),
  );
}

async function rawRun(): Promise<number> {
  const nc = await connect({ servers: URL });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const stream = `${prefix}_raw`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.raw`] });
  await jsm.consumers.add(stream, { durable_name: 'raw', ack_policy: AckPolicy.Explicit });
  const body = new TextEncoder().encode(JSON.stringify({ id: 'job_x', queue: 'ingest', orgId: 'org_1', kind: 'bench', payload: { n: 1 } }));
  const start = performance.now();
  await inParallel(N, IN_FLIGHT, () => js.publish(`${prefix}.raw`, body));
  const consumer = await js.consumers.get(stream, 'raw');
  const messages = await consumer.consume({ max_messages: 500 });
  let seen = 0;
  for await (const msg of messages) {
    msg.ack();
    if (++seen >= N) break;
  }
  await nc.flush();
  const seconds = (performance.now() - start) / 1000;
  await jsm.streams.delete(stream);
  await nc.close();
  return N / seconds;
}

async function jobsRun(queue: JetStreamJobQueue): Promise<number> {
  const start = performance.now();
  await inParallel(N, IN_FLIGHT, (i) => queue.enqueue({ id: `job_${prefix}_${i}`, queue: 'ingest', orgId: 'org_1', kind: 'bench', payload: { n: i } }));
  let done = 0;
  while (done < N) {
    const leases = await queue.claim('bench-worker', ['ingest'], { max: 100, waitMs: 2_000 });
    if (leases.length === 0) throw new Error(`no job to claim after ${done} of ${N}`);
    await Promise.all(leases.map((lease) => queue.complete(lease.job.id, lease.fence, { ok: true })));
    done += leases.length;
  }
  return N / ((performance.now() - start) / 1000);
}

async function deathToPickup(queue: JetStreamJobQueue, round: number): Promise<number> {
  const id = `job_${prefix}_death_${round}`;
  await queue.enqueue({ id, queue: 'render', orgId: 'org_1', kind: 'bench', payload: {} });
  const [lease] = await queue.claim('doomed-worker', ['render'], { waitMs: 2_000 });
  if (!lease) throw new Error('the first claim got nothing');
  // wall clock: the bench measures real elapsed time from the dead worker's last claim
  const died = Date.now();
  for (;;) {
    const [next] = await queue.claim('rescuer', ['render'], { waitMs: 5_000 });
    if (next?.job.id === id) {
      await queue.complete(id, next.fence, { rescued: true });
      // wall clock: the end of the same measurement
      return Date.now() - died;
    }
  }
}

const queue = await JetStreamJobQueue.open(systemClock, { url: URL, prefix, leaseMs: LEASE_MS, maxDeliver: 5 });
try {
  const raw = await rawRun();
  const jobs = await jobsRun(queue);
  const pickups: number[] = [];
  for (let round = 0; round < 3; round += 1) pickups.push(await deathToPickup(queue, round));
  pickups.sort((a, b) => a - b);
  console.log(
    `${N} jobs through JetStream (${URL}): ${jobs.toFixed(0)} jobs/s; raw publish+consume+ack ${raw.toFixed(0)} msgs/s; death to pickup ${pickups.join(', ')} ms (lease ${LEASE_MS} ms)`,
  );
  printSummary({
    jobs_per_s: Math.round(jobs),
    raw_msgs_per_s: Math.round(raw),
    ratio: Number((jobs / raw).toFixed(3)),
    lease_ms: LEASE_MS,
    death_to_pickup_ms: pickups[1],
  });
} finally {
  await queue.close();
  const nc = await connect({ servers: URL });
  const jsm = await jetstreamManager(nc);
  for await (const name of jsm.streams.names()) if (name.startsWith(`${prefix}_`)) await jsm.streams.delete(name);
  await nc.close();
}
