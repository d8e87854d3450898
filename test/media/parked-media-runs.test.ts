/**
 * Runs parked on media jobs (domains/media/run-waits.ts, runtime/agent/deferred-calls.ts): a chat run's
 * media tool call (`wait`, the default) hands its result over to the job, the run parks like an approval
 * wait (transcript persisted, actor stopped) and comes back with the job's view when the fake Runway
 * platform finishes, is cancelled, or after a restart of the service on the same data directory.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { startFakeRunwayServer, type FakeRunwayServer } from '../fakes/runway/server.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ownTempDir, useFakeLlm, useSuite } from '../helpers/suite.js';
import { execute, openStream, send, wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { createTask, runEnds } from '../tasks/helpers.js';

/** polls every few ms; an idle wait parks after 20 ms */
const ENV: Record<string, string> = {
  MEDIA_POLL_BASE_MS: '5',
  MEDIA_POLL_MAX_MS: '40',
  AGENT_PARK_AFTER_MS: '20',
  LLM_API_KEY: FAKE_LLM_API_KEY,
};

async function mediaOrg(server: TestServer, llm: FakeLlmServer, runway: FakeRunwayServer): Promise<ChatOrg & { sourceId: string }> {
  const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
  const source = await server.request('POST', '/sources', {
    token: org.session.token,
    body: { name: 'media', connector: 'runway', config: { api_key: runway.apiKey, base_url: runway.url } },
  });
  expect(source.status, source.text).toBe(201);
  return { ...org, sourceId: source.body.id as string };
}

const video = (prompt: string) => ({ tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt }) }] });
const reply = async (server: TestServer, org: ChatOrg) =>
  (await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token })).body.messages[1] as Record<string, any>;
const replyEnds = (server: TestServer, org: ChatOrg) =>
  eventually(
    async () => {
      const message = await reply(server, org);
      return message['status'] === 'streaming' ? undefined : message;
    },
    { what: 'the reply to end' },
  );
const actorIds = async (server: TestServer, org: ChatOrg) =>
  ((await server.request('GET', '/runtime/actors', { token: org.session.token })).body.items as { id: string }[]).map((actor) => actor.id);
const toolCall = async (server: TestServer, org: ChatOrg) => {
  const listed = await server.request('GET', `/chat/conversations/${org.conversationId}/tool-calls`, { token: org.session.token });
  return listed.body.items[0] as Record<string, any>;
};
/** the last tool message the model was sent: the call's result as the run resumed with it */
const lastToolResult = (llm: FakeLlmServer): Record<string, any> => {
  const sent = llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[];
  return JSON.parse(sent.filter((message) => message.role === 'tool').at(-1)?.content ?? 'null');
};
const finish = (runway: FakeRunwayServer, taskId: string): void => {
  const task = runway.tasks.get(taskId);
  if (task) task.outcome = { status: 'SUCCEEDED', output: [`${runway.url}/outputs/${taskId}.mp4?_jwt=signed`] };
};

/** sends a message whose run starts a video on `taskId` (running until `finish`) and waits for the hand-over; `answers`: the model's turn after it is scripted */
async function handedOver(server: TestServer, llm: FakeLlmServer, runway: FakeRunwayServer, org: ChatOrg, taskId: string, answers = true) {
  runway.nextIds.push(taskId);
  runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
  llm.script(answers ? [video(`a video for ${taskId}`), { text: `done with ${taskId}` }] : [video(`a video for ${taskId}`)]);
  const stream = await send(server, org, `make ${taskId}`);
  const deferred = await stream.waitFor((event) => event.event === 'tool_deferred');
  expect(deferred.data).toMatchObject({ tool_call_id: 'c_video', kind: 'media', keys: [expect.stringMatching(/^mjb_/)] });
  return { stream, jobId: deferred.data.keys[0] as string, runId: (await reply(server, org))['run_id'] as string };
}

describe('runs parked on media jobs', () => {
  const ctx = useSuite(async (own) => {
    const runway = own(await startFakeRunwayServer());
    const llm = own(await startFakeLlmServer());
    const server = own(await startTestServer(ENV));
    return { runway, llm, server };
  });
  const runtime = () => ctx.server.service.services.agentRuntime;

  it('parks while the job runs (GET shows it waiting), comes back when the platform finishes and ends with the outputs', async () => {
    const { server, llm, runway } = ctx;
    const org = await mediaOrg(server, llm, runway);
    const { stream, jobId, runId } = await handedOver(server, llm, runway, org, 'task-parked-1');
    await eventually(() => (runtime().parkedRuns > 0 ? true : undefined), { what: 'the run to park' });

    // parked: no actor, the reply still streaming, its tool call running, the job running for this run
    expect(await actorIds(server, org)).not.toContain(runId);
    expect(await reply(server, org)).toMatchObject({ status: 'streaming', run_id: runId });
    expect(await toolCall(server, org)).toMatchObject({ tool_call_id: 'c_video', tool: 'runway.media_text_to_video', status: 'running' });
    const running = await server.request('GET', `/media/jobs/${jobId}`, { token: org.session.token });
    expect(running.body).toMatchObject({ run_id: runId, status: expect.stringMatching(/^(queued|running)$/) });

    finish(runway, 'task-parked-1');
    await stream.ended;
    const message = await replyEnds(server, org);
    expect(message).toMatchObject({ status: 'complete', content: 'done with task-parked-1' });
    expect(runtime().parkedRuns).toBe(0);

    // the open stream saw the run come back: the call's result, then the reply's end
    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result;
    expect(result.result).toMatchObject({ job_id: jobId, status: 'succeeded', kind: 'video', cost: 48 });
    const [output] = result.result.outputs as { artifact_id: string; content_type: string; size: number }[];
    expect(output).toMatchObject({ content_type: 'video/mp4', size: runway.outputBytes('task-parked-1').length, artifact_id: expect.stringMatching(/^art_/) });
    expect(lastToolResult(llm)).toEqual(result);
    const content = await server.request('GET', `/artifacts/${output?.artifact_id}/content`, { token: org.session.token });
    expect(content.text).toBe(runway.outputBytes('task-parked-1').toString());
    expect(await toolCall(server, org)).toMatchObject({ status: 'succeeded' });
    expect(stream.events.at(-1)?.event).toBe('message_end');
  });

  it('cancelling the job brings the parked run back with `cancelled`; another organization cannot see or cancel the job', async () => {
    const { server, llm, runway } = ctx;
    const org = await mediaOrg(server, llm, runway);
    const other = await server.register('Another media org');
    const { stream, jobId } = await handedOver(server, llm, runway, org, 'task-parked-cancel');
    stream.close();
    await eventually(() => (runtime().parkedRuns > 0 ? true : undefined), { what: 'the run to park' });

    expect((await server.request('GET', `/media/jobs/${jobId}`, { token: other.token })).status).toBe(404);
    expect((await server.request('POST', `/media/jobs/${jobId}/cancel`, { token: other.token })).status).toBe(404);
    expect((await server.request('GET', '/media/jobs', { token: other.token })).body.items).toEqual([]);

    const cancelled = await server.request('POST', `/media/jobs/${jobId}/cancel`, { token: org.session.token });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(await replyEnds(server, org)).toMatchObject({ status: 'complete', content: 'done with task-parked-cancel' });
    expect(lastToolResult(llm)).toMatchObject({ error: { code: 'cancelled', details: { job_id: jobId, status: 'cancelled' } } });
    expect(await toolCall(server, org)).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
    expect(runway.tasks.get('task-parked-cancel')?.status).toBe('CANCELLED');
  });

  it('cancelling the parked reply ends it as cancelled; the job goes on and the run is not answered again', async () => {
    const { server, llm, runway } = ctx;
    const org = await mediaOrg(server, llm, runway);
    const { stream, jobId } = await handedOver(server, llm, runway, org, 'task-parked-reply-cancel', false);
    stream.close();
    await eventually(() => (runtime().parkedRuns > 0 ? true : undefined), { what: 'the run to park' });
    const message = await reply(server, org);
    const cancel = await server.request('POST', `/chat/conversations/${org.conversationId}/messages/${String(message['id'])}/cancel`, {
      token: org.session.token,
    });
    expect(cancel.status).toBe(202);
    expect(await replyEnds(server, org)).toMatchObject({ status: 'cancelled' });
    expect(await toolCall(server, org)).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
    expect(runtime().parkedRuns).toBe(0);
    // the job was not cancelled with the run: it finishes, and nobody waits on it any more
    finish(runway, 'task-parked-reply-cancel');
    const done = await eventually(async () => {
      const shown = await server.request('GET', `/media/jobs/${jobId}`, { token: org.session.token });
      return shown.body.status === 'succeeded' ? shown.body : undefined;
    });
    expect(done.outputs).toHaveLength(1);
    expect(await reply(server, org)).toMatchObject({ status: 'cancelled' });
  });

  it('a task run parks on its job the same way: GET shows it running, it comes back and succeeds with the outputs', async () => {
    const { server, llm, runway } = ctx;
    const org = await mediaOrg(server, llm, runway);
    const task = await createTask(server, org.session, {
      name: 'nightly video',
      trigger: { kind: 'webhook' },
      input: { instruction: 'make the video' },
      approval_defaults: { write: 'allow' },
      enabled_source_ids: [org.sourceId],
    });
    runway.nextIds.push('task-parked-task');
    runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
    llm.script([video('a task video'), { text: 'task video made' }]);
    const fired = await server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token });
    expect(fired.status, fired.text).toBe(202);
    const runId = fired.body.run_id as string;
    const stream = await openStream(server.url, 'GET', `/tasks/${task.id}/runs/${runId}/events`, { token: org.session.token });
    await stream.waitFor((event) => event.event === 'tool_deferred');
    stream.close();
    await eventually(async () => ((await actorIds(server, org)).includes(runId) ? undefined : true), { what: 'the task run to park' });
    const parked = await server.request('GET', `/tasks/${task.id}/runs/${runId}`, { token: org.session.token });
    expect(parked.body.status).toBe('running');

    finish(runway, 'task-parked-task');
    const run = await runEnds(server, org.session, task.id as string, runId);
    expect(run.status).toBe('succeeded');
    expect(lastToolResult(llm).result).toMatchObject({
      status: 'succeeded',
      outputs: [expect.objectContaining({ artifact_id: expect.stringMatching(/^art_/) })],
    });
  });

  it('wait: false still answers the job id at once and the run never waits', async () => {
    const { server, llm, runway } = ctx;
    const org = await mediaOrg(server, llm, runway);
    runway.nextTasks.push({ outcome: { status: 'RUNNING' } });
    llm.script([{ tool_calls: [{ id: 'c_now', ...execute('runway.media_text_to_video', { prompt: 'later', wait: false }) }] }, { text: 'queued' }]);
    const stream = await send(server, org, 'queue a video');
    await stream.ended;
    expect(stream.events.some((event) => event.event === 'tool_deferred')).toBe(false);
    expect(stream.events.find((event) => event.event === 'tool_result')?.data.result.result).toMatchObject({
      job_id: expect.stringMatching(/^mjb_/),
      status: 'queued',
    });
    expect(await replyEnds(server, org)).toMatchObject({ status: 'complete', content: 'queued' });
  });
});

describe('runs parked on media jobs across a restart', () => {
  const ctx = useFakeLlm();
  const suite = useSuite(async (own) => ({
    runway: own(await startFakeRunwayServer()),
    dataDirs: [ownTempDir(own, 'media-park-down-'), ownTempDir(own, 'media-park-after-')],
  }));
  const env = (parkAfterMs: string) => ({ ...ENV, JWT_SECRET: randomBytes(32).toString('hex'), AGENT_PARK_AFTER_MS: parkAfterMs });

  it('a run waiting at shutdown parks; the platform finishes while the service is down; after the restart the run ends with the outputs', async () => {
    const { runway } = suite;
    const dataDir = suite.dataDirs[0] as string;
    // never idle long enough: the shutdown parks it
    const config = env('600000');
    let server = await startTestServer(config, { dataDir });
    try {
      const org = await mediaOrg(server, ctx.llm, runway);
      const { stream, runId } = await handedOver(server, ctx.llm, runway, org, 'task-restart-down');
      expect(server.service.services.agentRuntime.parkedRuns).toBe(0);
      await server.stop();
      await stream.ended;
      expect(stream.events.some((event) => event.event === 'tool_result' || event.event === 'message_end')).toBe(false);
      finish(runway, 'task-restart-down');

      server = await startTestServer(config, { dataDir });
      const message = await replyEnds(server, org);
      expect(message).toMatchObject({ status: 'complete', content: 'done with task-restart-down', run_id: runId });
      const result = lastToolResult(ctx.llm);
      expect(result.result).toMatchObject({ status: 'succeeded', outputs: [expect.objectContaining({ content_type: 'video/mp4' })] });
      const content = await server.request('GET', `/artifacts/${result.result.outputs[0].artifact_id}/content`, { token: org.session.token });
      expect(content.text).toBe(runway.outputBytes('task-restart-down').toString());
      expect(server.service.services.agentRuntime.parkedRuns).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('a parked run survives a restart and comes back when its job finishes after it', async () => {
    const { runway } = suite;
    const dataDir = suite.dataDirs[1] as string;
    const config = env('20');
    let server = await startTestServer(config, { dataDir });
    try {
      const org = await mediaOrg(server, ctx.llm, runway);
      const { stream, jobId } = await handedOver(server, ctx.llm, runway, org, 'task-restart-after');
      stream.close();
      await eventually(() => (server.service.services.agentRuntime.parkedRuns > 0 ? true : undefined), { what: 'the run to park' });
      await server.stop();

      server = await startTestServer(config, { dataDir });
      expect(server.service.services.agentRuntime.parkedRuns).toBe(1);
      // the job is followed again and still running: the run stays parked
      await eventually(async () => {
        const shown = await server.request('GET', `/media/jobs/${jobId}`, { token: org.session.token });
        return shown.body.status === 'running' ? true : undefined;
      });
      expect(await reply(server, org)).toMatchObject({ status: 'streaming' });
      finish(runway, 'task-restart-after');
      expect(await replyEnds(server, org)).toMatchObject({ status: 'complete', content: 'done with task-restart-after' });
      expect(lastToolResult(ctx.llm).result).toMatchObject({ job_id: jobId, status: 'succeeded' });
    } finally {
      await server.stop();
    }
  });
});
