/**
 * Media-generation jobs end to end: the real server, a runway source pointing at the fake Runway
 * API (the official SDK against it), the fake LLM driving chat runs that call the media tools.
 * A tool call becomes a durable job polled on the `render` queue; the run waits on it and goes on
 * with the outputs copied into its artifacts (`wait`, the default) or gets the job id at once.
 */
import { describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startFakeRunwayServer } from '../fakes/runway/server.js';
import { eventually } from '../helpers/eventually.js';
import { startLlmServer } from '../helpers/llm.js';
import { startTestServer } from '../helpers/server.js';
import { ownLlm, ownTempDir, useSuite } from '../helpers/suite.js';
import { execute, send, type ChatOrg } from '../runtime/chat-helpers.js';
import { FAST_POLLS, mediaJob as job, mediaOrg, results, taskPolls } from './helpers.js';

/** the in-process poller of the embedded default (test/media/media-workers.test.ts runs the polls on worker processes) */
const FAST = FAST_POLLS;

describe('media jobs', () => {
  const ctx = useSuite(async (own) => {
    const runway = own(await startFakeRunwayServer());
    return { runway, ...ownLlm(own, await startLlmServer(FAST)) };
  });

  it('the run waits on the job (wait: true), streams its progress and goes on with the video copied into the run artifacts', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push('task-park-1');
    ctx.runway.nextTasks.push({ runningPolls: 3 });
    ctx.llm.script([
      { tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'a lighthouse at dawn' }) }] },
      { text: 'Here is your video.' },
    ]);
    const stream = await send(ctx.server, org, 'Make a short video of a lighthouse.');
    await stream.ended;

    const progress = stream.events.filter((event) => event.event === 'media_progress').map((event) => [event.data.status, event.data.progress]);
    expect(progress).toEqual([
      ['queued', 0],
      ['running', 0.25],
      ['running', 0.5],
      ['running', 0.75],
      ['succeeded', 1],
    ]);
    const outcome = results(stream)['c_video'];
    expect(outcome.result).toMatchObject({ status: 'succeeded', kind: 'video', ratio: '16:9', duration: 4, cost: 48 });
    const [output] = outcome.result.outputs as { artifact_id: string; path: string; content_type: string; size: number }[];
    const bytes = ctx.runway.outputBytes('task-park-1');
    expect(output).toMatchObject({ content_type: 'video/mp4', size: bytes.length });
    // the final artifacts are in the stream too (the last progress event) and in the store
    expect(stream.events.filter((event) => event.event === 'media_progress').at(-1)?.data.outputs).toEqual([output]);
    const content = await ctx.server.request('GET', `/artifacts/${output?.artifact_id}/content`, { token: org.session.token });
    expect(content.status).toBe(200);
    expect(content.text).toBe(bytes.toString());
    expect(stream.events.at(-1)?.event).toBe('message_end');

    const shown = await job(ctx.server, org, outcome.result.job_id as string);
    expect(shown.body).toMatchObject({
      tool: 'runway.media_text_to_video',
      task_id: 'task-park-1',
      status: 'succeeded',
      progress: 1,
      cost: 48,
      outputs: [output],
      error: null,
    });
    expect(shown.body.finished_at).not.toBeNull();
    const byRun = await ctx.server.request('GET', `/media/jobs?run_id=${shown.body.run_id}&status=succeeded`, { token: org.session.token });
    expect(byRun.body.items.map((item: { id: string }) => item.id)).toEqual([shown.body.id]);
    const none = await ctx.server.request('GET', `/media/jobs?status=failed`, { token: org.session.token });
    expect(none.body.items).toEqual([]);
  });

  it('answers the job id at once with wait: false; the job carries on and copies its images', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.llm.script([
      { tool_calls: [{ id: 'c_images', ...execute('runway.media_text_to_image', { prompt: 'a red bicycle', num_images: 2, wait: false }) }] },
      { text: 'The images are on their way.' },
    ]);
    const stream = await send(ctx.server, org, 'Two images of a red bicycle, please.');
    await stream.ended;
    const answer = results(stream)['c_images'].result;
    expect(answer).toMatchObject({ status: 'queued', kind: 'image', ratio: '16:9', job_ids: [expect.stringMatching(/^mjb_/), expect.stringMatching(/^mjb_/)] });
    for (const id of answer.job_ids as string[]) {
      const done = await eventually(async () => {
        const shown = await job(ctx.server, org, id);
        return shown.body.status === 'succeeded' ? shown.body : undefined;
      });
      expect(done.outputs).toEqual([expect.objectContaining({ content_type: 'image/png', artifact_id: expect.stringMatching(/^art_/) })]);
      expect(done.cost).toBe(8);
    }
  });

  it('retries 429 (after Retry-After) and 5xx answers while polling', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push('task-retry-1');
    ctx.runway.nextTasks.push({ runningPolls: 4 });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'waves' }) }] }, { text: 'done' }]);
    const stream = await send(ctx.server, org, 'waves');
    await stream.waitFor((event) => event.event === 'media_progress' && event.data.status === 'running');
    ctx.runway.throttleNext(2, 1);
    ctx.runway.failNext(2, 503);
    await stream.ended;
    expect(results(stream)['c_video'].result).toMatchObject({ status: 'succeeded' });
    // 6 answered polls (pending, 4 running, succeeded) and the 4 refused ones, each tried again
    expect(taskPolls(ctx.runway, 'task-retry-1')).toBe(10);
  });

  it('cancels a running job on the platform; the waiting run gets `cancelled`; other organizations see 404', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    const other = await ctx.server.register('Other media org');
    ctx.runway.nextIds.push('task-cancel-1');
    ctx.runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
    ctx.llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'a long take' }) }] }, { text: 'cancelled' }]);
    const stream = await send(ctx.server, org, 'a long take');
    const running = await stream.waitFor((event) => event.event === 'media_progress' && event.data.status === 'running');
    const id = running.data.job_id as string;

    expect((await ctx.server.request('GET', `/media/jobs/${id}`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('POST', `/media/jobs/${id}/cancel`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('GET', '/media/jobs', { token: other.token })).body.items).toEqual([]);

    const cancelled = await ctx.server.request('POST', `/media/jobs/${id}/cancel`, { token: org.session.token });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
    await stream.ended;
    expect(results(stream)['c_video'].error).toMatchObject({ code: 'cancelled', details: { job_id: id } });
    expect(ctx.runway.requests.some((request) => request.method === 'DELETE' && request.path === '/v1/tasks/task-cancel-1')).toBe(true);
    expect(ctx.runway.tasks.get('task-cancel-1')?.status).toBe('CANCELLED');
    const again = await ctx.server.request('POST', `/media/jobs/${id}/cancel`, { token: org.session.token });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
  });

  it('maps every error of the spec to a tool-result code; a content-filter failure is never retried', async () => {
    const org = await mediaOrg(ctx.server, ctx.llm, ctx.runway);
    ctx.runway.nextIds.push('task-filter-1', 'task-asset-1');
    ctx.runway.nextTasks.push({}, { outcome: { status: 'FAILED', failure: 'The asset could not be processed.', failureCode: 'ASSET.INVALID' } });
    const image = 'https://images.example.com/ok.png';
    ctx.runway.reachableImages.add(image);
    ctx.llm.script([
      {
        tool_calls: [
          { id: 'c_filter', ...execute('runway.media_text_to_video', { prompt: `something ${ctx.runway.blockedWord}` }) },
          { id: 'c_asset', ...execute('runway.media_image_to_video', { image_url: image }) },
          { id: 'c_url', ...execute('runway.media_image_to_video', { image_url: 'https://images.example.com/missing.png' }) },
          { id: 'c_ratio', ...execute('runway.media_text_to_image', { prompt: 'square-ish', ratio: '4:3' }) },
        ],
      },
      { text: 'errors' },
    ]);
    const stream = await send(ctx.server, org, 'errors');
    await stream.ended;
    const outcomes = results(stream);
    expect(outcomes['c_filter'].error).toMatchObject({ code: 'generation_failed' });
    expect(outcomes['c_asset'].error).toMatchObject({ code: 'invalid_image_url' });
    expect(outcomes['c_url'].error).toMatchObject({ code: 'invalid_image_url' });
    expect(outcomes['c_ratio'].error).toMatchObject({ code: 'unsupported_ratio' });
    // pending, running, failed: then never polled or created again
    expect(taskPolls(ctx.runway, 'task-filter-1')).toBe(3);
    expect(ctx.runway.requests.filter((request) => request.method === 'POST' && JSON.stringify(request.body).includes(ctx.runway.blockedWord))).toHaveLength(1);
    const failed = await ctx.server.request('GET', '/media/jobs?status=failed', { token: org.session.token });
    expect(failed.body.items.map((item: any) => [item.task_id, item.error.code]).sort()).toEqual([
      ['task-asset-1', 'invalid_image_url'],
      ['task-filter-1', 'generation_failed'],
    ]);

    ctx.runway.credits = 10;
    ctx.llm.script([{ tool_calls: [{ id: 'c_credits', ...execute('runway.media_text_to_video', { prompt: 'x' }) }] }, { text: 'no credits' }]);
    const poor = await send(ctx.server, org, 'credits');
    await poor.ended;
    ctx.runway.credits = 1000;
    expect(results(poor)['c_credits'].error).toMatchObject({ code: 'insufficient_credits' });

    const badKey = await mediaOrg(ctx.server, ctx.llm, ctx.runway, 'key_revoked');
    ctx.llm.script([{ tool_calls: [{ id: 'c_key', ...execute('runway.media_text_to_video', { prompt: 'x' }) }] }, { text: 'bad key' }]);
    const refused = await send(ctx.server, badKey, 'key');
    await refused.ended;
    expect(results(refused)['c_key'].error).toMatchObject({ code: 'unauthorized' });
  });
});

describe('media jobs: timeout and restart', () => {
  const ctx = useSuite(async (own) => ({ runway: own(await startFakeRunwayServer()), dataDir: ownTempDir(own, 'media-restart-') }));

  it('fails a job running past MEDIA_JOB_TIMEOUT_SECS with `timeout` and cancels its task', async () => {
    const { server, llm } = await startLlmServer({ ...FAST, MEDIA_JOB_TIMEOUT_SECS: '1' });
    try {
      const org = await mediaOrg(server, llm, ctx.runway);
      ctx.runway.nextIds.push('task-timeout-1');
      ctx.runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
      llm.script([{ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'forever' }) }] }, { text: 'too slow' }]);
      const stream = await send(server, org, 'forever');
      await stream.ended;
      expect(results(stream)['c_video'].error).toMatchObject({ code: 'timeout' });
      expect(ctx.runway.tasks.get('task-timeout-1')?.status).toBe('CANCELLED');
    } finally {
      await server.stop();
      await llm.close();
    }
  });

  it('parks a waiting run at shutdown, then picks the unfinished job up again after the restart and copies its outputs', async () => {
    const env = { ...FAST, JWT_SECRET: 'm'.repeat(40), LLM_API_KEY: FAKE_LLM_API_KEY };
    const { dataDir } = ctx;
    const first = await startLlmServer(env, { dataDir });
    let org: ChatOrg;
    let id: string;
    try {
      org = await mediaOrg(first.server, first.llm, ctx.runway);
      ctx.runway.nextIds.push('task-restart-1');
      ctx.runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
      first.llm.script([
        { tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'across a restart' }) }] },
        { text: 'the service is restarting' },
      ]);
      const stream = await send(first.server, org, 'restart');
      const running = await stream.waitFor((event) => event.event === 'media_progress' && event.data.status === 'running');
      id = running.data.job_id as string;
      // the stop does not wait for the job: the waiting run parks (parked-media-runs.test.ts), its call has no result yet
      await first.server.stop();
      await stream.ended;
      expect(results(stream)['c_video']).toBeUndefined();
    } finally {
      await first.server.stop();
      await first.llm.close();
    }
    // the platform finishes while the service is down
    const task = ctx.runway.tasks.get('task-restart-1');
    if (task) task.outcome = { status: 'SUCCEEDED', output: [`${ctx.runway.url}/outputs/task-restart-1.mp4?_jwt=signed`] };

    const second = await startTestServer(env, { dataDir });
    try {
      const login = await second.request('POST', '/auth/login', { body: { email: org.session.email, password: org.session.password } });
      const token = login.body.token as string;
      const done = await eventually(async () => {
        const shown = await second.request('GET', `/media/jobs/${id}`, { token });
        return shown.body.status === 'succeeded' ? shown.body : undefined;
      });
      expect(done.outputs).toEqual([expect.objectContaining({ content_type: 'video/mp4', size: ctx.runway.outputBytes('task-restart-1').length })]);
      const content = await second.request('GET', `/artifacts/${done.outputs[0].artifact_id}/content`, { token });
      expect(content.text).toBe(ctx.runway.outputBytes('task-restart-1').toString());
    } finally {
      await second.stop();
    }
  });
});
