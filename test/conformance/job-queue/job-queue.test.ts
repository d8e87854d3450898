import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, it } from 'vitest';
import { systemClock } from '../../../runtime/clock.js';
import { InProcessJobQueue } from '../../../runtime/jobs/in-process-queue.js';
import { JetStreamJobQueue } from '../../../runtime/jobs/jetstream-queue.js';
import { simulatedClock } from '../../helpers/clock.js';
import { describeJobQueue } from './job-queue.conformance.js';

describeJobQueue('in-process', async () => {
  const clock = simulatedClock('2026-11-24T10:00:00Z');
  const queue = new InProcessJobQueue(clock, { leaseMs: 30_000, maxDeliver: 3, settledKeepMs: 60_000 });
  return {
    queue,
    leaseMs: 30_000,
    keepMs: 60_000,
    maxDeliver: 3,
    redeliveryWaitMs: 0,
    pass: async (ms) => clock.increment(ms),
    dispose: () => queue.close(),
  };
});

const natsUrl = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const natsUp = await connect({ servers: natsUrl, timeout: 1_000, reconnect: false }).then(
  async (nc) => {
    await nc.close();
    return true;
  },
  () => false,
);

if (natsUp) {
  describeJobQueue('jetstream', async () => {
    const prefix = `jqc_${randomBytes(4).toString('hex')}`;
    // a short keep period: the ledger's max age drops settled entries, the sweep (every second) keeps the others
    const keepMs = 4_000;
    const queue = await JetStreamJobQueue.open(systemClock, {
      url: natsUrl,
      prefix,
      leaseMs: 1_000,
      maxDeliver: 3,
      settledKeepMs: keepMs,
      sweepIntervalMs: 1_000,
      republishAfterMs: 0,
    });
    return {
      queue,
      leaseMs: 1_000,
      keepMs,
      // the ledger write of `enqueue` without its publish
      enqueueLost: async (spec) => {
        const entry = {
          spec,
          state: 'pending',
          deliveries: 0,
          enqueuedAt: Date.now(),
          result: null,
          error: null,
          fence: '',
          reply: '',
          workerId: '',
          expiresAt: 0,
        } as const;
        if (!(await queue.ledger.write(spec.id, entry, 0))) throw new Error(`job ${spec.id} already in the ledger`);
      },
      maxDeliver: 3,
      redeliveryWaitMs: 3_000,
      pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      dispose: async () => {
        await queue.close();
        const nc = await connect({ servers: natsUrl });
        const jsm = await jetstreamManager(nc);
        for await (const name of jsm.streams.names()) if (name.startsWith(`${prefix}_`)) await jsm.streams.delete(name);
        await nc.close();
      },
    };
  });
} else {
  console.log(`SKIP job queue conformance: jetstream (no NATS server answers on ${natsUrl})`);
  describe.skip(`job queue conformance: jetstream (no NATS server on ${natsUrl})`, () => {
    it('runs the conformance kit against JetStream', () => undefined);
  });
}
