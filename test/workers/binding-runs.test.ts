/**
 * A channel binding's run with feature `workers` on: the fake Slack delivers
 * a mention, the binding's run stays in the gateway and its model turn runs
 * on a real worker process; the reply reaches Slack as without workers.
 */
import { describe, expect, it } from 'vitest';
import { askInThread, connectChannel, startWorld } from '../channels/helpers.js';
import { useSuite } from '../helpers/suite.js';
import { startWorker, WORKERS_ENV } from './helpers.js';

describe('binding runs on workers', () => {
  const ctx = useSuite(async (own) => {
    const world = own(await startWorld({ env: WORKERS_ENV }));
    const ops = await connectChannel(world, { matchRule: { slack_channel: '#ops' } });
    world.slack.eventsUrl = ops.eventsUrl;
    const worker = own(startWorker(world.server.url, ['--queues', 'agent'], { EGRESS_ALLOW: '127.0.0.1,::1' }), (process) => process.kill());
    await worker.logged('worker registered');
    return { world, ops, worker };
  });

  it('answers a mention with a model turn performed by the worker', async () => {
    const { world, ops, worker } = ctx;
    world.llm.script([{ text: ['All ', 'green.'] }]);
    await askInThread(world, 'status?', 'All green.');
    const runs = await world.server.service.services.collections.agentRuns.findAll(ops.session.organization.id as never);
    const run = runs.find((entry) => entry.input['channel_id'] === ops.channelId);
    expect(run).toMatchObject({ kind: 'chat', status: 'succeeded' });
    await worker.logged('job completed', { job_id: `${run?.id}.turn.1` });
    expect(await world.server.service.services.workers.queue.get(`${run?.id}.turn.1`)).toMatchObject({ state: 'done', kind: 'model_turn' });
    expect(world.llm.requests).toHaveLength(1);
  });
});
