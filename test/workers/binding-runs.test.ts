/**
 * A channel binding's run with feature `workers` on: the fake Slack delivers
 * a mention, the binding's run stays in the gateway and its model turn runs
 * on a real worker process; the reply reaches Slack as without workers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectChannel, mention, settle, startWorld, waitForText, type ChannelWorld, type ConnectedChannel } from '../channels/helpers.js';
import { startWorker, WORKER_TOKEN, type WorkerProcess } from './helpers.js';

const ENV = {
  SERVICE_FEATURES_WORKERS: 'true',
  WORKER_TOKEN,
  WORKER_LEASE_TTL: '2',
  ...(process.env['NATS_URL'] ? { NATS_URL: process.env['NATS_URL'] } : {}),
};

describe('binding runs on workers', () => {
  let world: ChannelWorld;
  let ops: ConnectedChannel;
  let worker: WorkerProcess;
  beforeAll(async () => {
    world = await startWorld({ env: ENV });
    ops = await connectChannel(world, { matchRule: { slack_channel: '#ops' } });
    world.slack.eventsUrl = ops.eventsUrl;
    worker = startWorker(world.server.url, ['--queues', 'agent'], { EGRESS_ALLOW: '127.0.0.1,::1' });
    await worker.logged('worker registered');
  });
  afterAll(async () => {
    await worker.kill();
    await world.close();
  });

  it('answers a mention with a model turn performed by the worker', async () => {
    world.llm.script([{ text: ['All ', 'green.'] }]);
    const { message } = await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, 'status?') });
    const reply = await waitForText(world.slack, 'C0OPS0001', 'All green.');
    expect(reply.args['thread_ts']).toBe(message.ts);
    await settle(world);
    const runs = await world.server.service.services.collections.agentRuns.findAll(ops.session.organization.id as never);
    const run = runs.find((entry) => entry.input['channel_id'] === ops.channelId);
    expect(run).toMatchObject({ kind: 'chat', status: 'succeeded' });
    await worker.logged('job completed', { job_id: `${run?.id}.turn.1` });
    expect(await world.server.service.services.workers.queue.get(`${run?.id}.turn.1`)).toMatchObject({ state: 'done', kind: 'model_turn' });
    expect(world.llm.requests).toHaveLength(1);
  });
});
