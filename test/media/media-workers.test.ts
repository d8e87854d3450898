/**
 * Media jobs with feature `workers`: the `render` queue's `media_poll` jobs are claimed by real worker
 * processes (`worker.ts`), which step each job through the gateway (`POST /workers/jobs/:id/media-poll`,
 * behind their fence) while the gateway claims nothing on `render`; on the in-process queue and on
 * JetStream (NATS on 127.0.0.1:4222, else a SKIP line). A job waits queued until a worker serves
 * `render`; 429 and 5xx are retried across steps; other kinds on `render` reach the workers; a stale
 * fence is 409 lease_lost before the platform is polled; a cancel ends the worker's job; a job whose
 * deliveries all failed is followed to its end by the gateway rather than left `running`.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeRunwayServer } from '../fakes/runway/server.js';
import { eventually } from '../helpers/eventually.js';
import { startLlmServer } from '../helpers/llm.js';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { execute, send } from '../runtime/chat-helpers.js';
import { startWorker, TEST_HANDLERS, WORKER_TOKEN, type WorkerProcess } from '../workers/helpers.js';
import { FAST_POLLS, mediaJob, mediaOrg, results, taskPolls } from './helpers.js';

/** a worker whose `media_poll` always fails */
const FAILING_HANDLERS = new URL('../workers/fixtures/media-handlers.ts', import.meta.url).pathname;
const natsUrl = 'nats://127.0.0.1:4222';
const natsUp = await connect({ servers: natsUrl, timeout: 1_000, reconnect: false }).then(
  async (nc) => {
    await nc.close();
    return true;
  },
  () => false,
);
if (!natsUp) console.log(`SKIP media jobs on jetstream workers (no NATS server answers on ${natsUrl})`);
const queues = natsUp ? (['in-process', 'jetstream'] as const) : (['in-process'] as const);

describe.each(queues)('media jobs on worker processes (%s queue)', { timeout: 120_000 }, (kind) => {
  const env: Record<string, string> = {
    ...FAST_POLLS,
    SERVICE_FEATURES_WORKERS: 'true',
    WORKER_TOKEN,
    WORKER_LEASE_TTL: '3',
    ...(kind === 'jetstream' ? { NATS_URL: natsUrl, NATS_STREAM_PREFIX: `mw${randomBytes(4).toString('hex')}` } : {}),
  };
  const ctx = useSuite(async (own) => ({ runway: own(await startFakeRunwayServer()), ...ownLlm(own, await startLlmServer(env)) }));
  const started: WorkerProcess[] = [];
  const worker = async (handlers = TEST_HANDLERS): Promise<WorkerProcess> => {
    const process = startWorker(ctx.server.url, ['--queues', 'render', '--handlers', handlers]);
    started.push(process);
    await process.logged('worker registered');
    return process;
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.kill()));
  });

  it('waits queued with no worker on `render`, then a worker follows the job to its end and the run goes on with the copied video', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push(`task-w-${kind}`);
    ctx.runway.nextTasks.push({ runningPolls: 2 });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'a harbour' }) }] }, { text: 'Here it is.' }]);
    const stream = await send(ctx.server, org, 'a harbour');
    const queued = await stream.waitFor((event) => event.event === 'media_progress' && event.data.status === 'queued');
    const id = queued.data.job_id as string;
    // the gateway claims nothing on `render` with workers on: the task is not polled until a worker comes
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(taskPolls(ctx.runway, `task-w-${kind}`)).toBe(0);
    expect((await mediaJob(ctx.server, org, id)).body.status).toBe('queued');

    const one = await worker();
    await stream.ended;
    expect(results(stream)['c_video'].result).toMatchObject({ status: 'succeeded', job_id: id });
    const done = (await mediaJob(ctx.server, org, id)).body;
    expect(done.outputs).toEqual([expect.objectContaining({ content_type: 'video/mp4', size: ctx.runway.outputBytes(`task-w-${kind}`).length })]);
    const content = await ctx.server.request('GET', `/artifacts/${done.outputs[0].artifact_id}/content`, { token: org.session.token });
    expect(content.text).toBe(ctx.runway.outputBytes(`task-w-${kind}`).toString());
    // pending, 2 running, succeeded: each poll one step of the worker's job, which completed once
    expect(taskPolls(ctx.runway, `task-w-${kind}`)).toBe(4);
    const completed = await one.logged('job completed', { job_id: id });
    expect(completed['job_id']).toBe(id);
    expect(await ctx.server.service.services.workers.queue.get(id)).toMatchObject({ state: 'done', deliveries: 1, result: { status: 'succeeded' } });
  });

  it('retries 429 and 5xx answers across the worker steps; other kinds queued on `render` reach the worker too', async () => {
    await worker();
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    const plain = await ctx.server.service.services.workers.queue.enqueue({
      id: `plain-${kind}-${randomBytes(3).toString('hex')}`,
      queue: 'render',
      orgId: org.session.organization.id,
      kind: 'test_sleep',
      payload: { ms: 5 },
    });
    ctx.runway.nextIds.push(`task-wr-${kind}`);
    ctx.runway.nextTasks.push({ runningPolls: 3 });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'rain' }) }] }, { text: 'done' }]);
    const stream = await send(ctx.server, org, 'rain');
    await stream.waitFor((event) => event.event === 'media_progress' && event.data.status === 'running');
    ctx.runway.throttleNext(2, 1);
    ctx.runway.failNext(2, 503);
    await stream.ended;
    expect(results(stream)['c_video'].result).toMatchObject({ status: 'succeeded' });
    // 5 answered polls (pending, 3 running, succeeded) and the 4 refused ones, each tried again
    expect(taskPolls(ctx.runway, `task-wr-${kind}`)).toBe(9);
    const other = await eventually(async () => {
      const info = await ctx.server.service.services.workers.queue.get(plain.id);
      return info?.state === 'done' ? info : undefined;
    });
    expect(other.result).toMatchObject({ delivery: 1, done_by: expect.stringMatching(/^wrk_/) });
  });

  it('refuses a step with a stale fence (409 lease_lost) before polling; a cancel ends the job the worker follows', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push(`task-wc-${kind}`);
    ctx.runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'long', wait: false }) }] }, { text: 'queued' }]);
    const stream = await send(ctx.server, org, 'long');
    await stream.ended;
    const id = results(stream)['c_video'].result.job_id;
    expect(id).toMatch(/^mjb_/);

    const auth = { token: WORKER_TOKEN };
    const stale = await ctx.server.request('POST', `/workers/jobs/${id}/media-poll`, { body: { fence: '1', poll: true }, ...auth });
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body.error.code).toBe('lease_lost');
    const bad = await ctx.server.request('POST', `/workers/jobs/${id}/media-poll`, { body: { fence: '1', retries: -1 }, ...auth });
    expect(bad.status).toBe(400);
    const anonymous = await ctx.server.request('POST', `/workers/jobs/${id}/media-poll`, { body: { fence: '1' } });
    expect(anonymous.status).toBe(401);
    expect(taskPolls(ctx.runway, `task-wc-${kind}`)).toBe(0);

    const one = await worker();
    await eventually(async () => ((await mediaJob(ctx.server, org, id)).body.status === 'running' ? true : undefined));
    const cancelled = await ctx.server.request('POST', `/media/jobs/${id}/cancel`, { token: org.session.token });
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    await one.logged('job completed', { job_id: id });
    expect(await ctx.server.service.services.workers.queue.get(id)).toMatchObject({ state: 'done', result: { status: 'cancelled' } });
  });

  it('follows a job in the gateway once its deliveries all failed on workers, so its record does not stay unfinished', async () => {
    const failing = await worker(FAILING_HANDLERS);
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push(`task-wd-${kind}`);
    ctx.runway.nextTasks.push({ runningPolls: 1 });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'dead letters' }) }] }, { text: 'done' }]);
    const stream = await send(ctx.server, org, 'dead letters');
    await stream.ended;
    const outcome = results(stream)['c_video'].result;
    expect(outcome).toMatchObject({ status: 'succeeded' });
    expect(await ctx.server.service.services.workers.queue.get(outcome.job_id)).toMatchObject({ state: 'dead' });
    expect(failing.logs.filter((line) => line['msg'] === 'job failed' && line['job_id'] === outcome.job_id).length).toBeGreaterThan(1);
  });
});
