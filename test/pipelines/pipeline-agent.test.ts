/**
 * /pipeline-agent/runs against the real server and the fake LLM: an agent run
 * started with a pipeline token, mirrored into the pipeline run's log and
 * progress, scoped to its run, and cancelled with it.
 */
import { describe, expect, it } from 'vitest';
import { startWiredOrg } from '../helpers/llm.js';
import { eventually } from '../helpers/eventually.js';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { expectStatus } from '../helpers/expect-status.js';

const ctx = useSuite(async (own) => ownLlm(own, await startWiredOrg()));

async function startRun() {
  const name = `pa-${Math.random().toString(36).slice(2, 8)}`;
  const pipeline = await ctx.server.request('POST', '/pipelines', { token: ctx.owner.token, body: { name } });
  expect(pipeline.status).toBe(201);
  const started = await ctx.server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: ctx.owner.token, body: {} });
  expect(started.status).toBe(201);
  return { pipelineId: pipeline.body.id as string, runId: started.body.run.id as string, token: started.body.token as string };
}

type Entry = { kind: string; level: string; phase: string | null; message: string | null; fraction: number | null };

describe('/pipeline-agent/runs', () => {
  it('runs an agent with a pipeline token; its steps and progress show in the pipeline run', async () => {
    const { pipelineId, runId, token } = await startRun();
    ctx.llm.script([{ tool_calls: [{ name: 'search_connector_tools', arguments: { query: 'graph' } }] }, { text: 'summary written' }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', {
      token,
      body: { instruction: 'summarize the graph', inputs: { day: 3 }, wait: true },
    });
    expectStatus(started, 201).toMatchObject({ pipeline_run_id: runId, pipeline_id: pipelineId, status: 'succeeded', output: 'summary written', turns: 2 });
    expect(typeof started.body.cost_usd).toBe('number');
    const read = await ctx.server.request('GET', `/pipeline-agent/runs/${started.body.id as string}`, { token });
    expect(read.body).toMatchObject({ id: started.body.id, status: 'succeeded', output: 'summary written' });
    // the model was told the instruction and its inputs
    expect(JSON.stringify(ctx.llm.requests.at(-2)?.body)).toContain('summarize the graph');

    const entries = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}/entries`, { token: ctx.owner.token });
    const items = entries.body.items as Entry[];
    expect(items.every((entry) => entry.phase === 'agent')).toBe(true);
    expect(items.filter((entry) => entry.kind === 'log').map((entry) => entry.message)).toEqual([
      'tool call search_connector_tools',
      'tool result search_connector_tools: ok',
      'summary written',
    ]);
    const progress = items.filter((entry) => entry.kind === 'progress');
    expect(progress.length).toBe(3);
    expect(progress.at(-1)).toMatchObject({ fraction: 1, message: `agent run ${started.body.id as string} succeeded` });
    const run = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: ctx.owner.token });
    expect(run.body).toMatchObject({ status: 'running', phase: 'agent', progress: { fraction: 1 } });

    const events = await ctx.server.request('GET', `/pipeline-agent/runs/${started.body.id as string}/events`, { token, undocumented: 'an SSE stream' });
    expect(events.status).toBe(200);
    expect(events.text).toContain('event: tool_call_start');
    expect(events.text).toContain('event: message_end');
  });

  it("another run's token finds nothing (404); the owner's login token reads it; a finished run's token is 401", async () => {
    const first = await startRun();
    const second = await startRun();
    ctx.llm.script([{ text: 'ok' }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', { token: first.token, body: { instruction: 'hi', wait: true } });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    expect((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: second.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/pipeline-agent/runs/${id}/events`, { token: second.token, undocumented: 'an SSE stream' })).status).toBe(404);
    expect((await ctx.server.request('POST', `/pipeline-agent/runs/${id}/cancel`, { token: second.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: ctx.owner.token })).body).toMatchObject({ id, status: 'succeeded' });
    const other = await ctx.server.register('Foreign Agent Org');
    expect((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: other.token })).status).toBe(404);
    // a login token names the run; another organization's run is 404
    const named = await ctx.server.request('POST', '/pipeline-agent/runs', { token: other.token, body: { instruction: 'x', run_id: first.runId } });
    expect(named.status).toBe(404);
    expect((await ctx.server.request('POST', '/pipeline-agent/runs', { token: first.token, body: { instruction: '' } })).status).toBe(400);
    expect((await ctx.server.request('POST', '/pipeline-agent/runs', { token: first.token, body: { instruction: 'x', agent: 'nobody' } })).status).toBe(404);

    await ctx.server.request('POST', `/pipelines/${first.pipelineId}/runs/${first.runId}/finish`, { token: ctx.owner.token, body: { status: 'succeeded' } });
    expect((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: first.token })).status).toBe(401);
    expect((await ctx.server.request('POST', '/pipeline-agent/runs', { token: first.token, body: { instruction: 'late' } })).status).toBe(401);
  });

  it('cancelling the pipeline run cancels its agent run', async () => {
    const { pipelineId, runId, token } = await startRun();
    ctx.llm.script([{ text: ['thinking ', 'more'], hold_after_chunks: 1 }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', { token, body: { instruction: 'take your time' } });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    await ctx.llm.whenHeld();
    const cancelled = await ctx.server.request('POST', `/pipelines/${pipelineId}/runs/${runId}/cancel`, { token: ctx.owner.token });
    expect(cancelled.body.status).toBe('cancelled');
    // the run stops after its current step: the model's held answer ends
    ctx.llm.release();
    const ended = await eventually(async () => {
      const read = await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token: ctx.owner.token });
      return read.body.status === 'cancelled' ? read.body : undefined;
    });
    expect(ended).toMatchObject({ status: 'cancelled' });
  });

  it('an agent run cancelled through its own route ends cancelled', async () => {
    const { token } = await startRun();
    ctx.llm.script([{ text: ['a', 'b'], hold_after_chunks: 1 }]);
    const started = await ctx.server.request('POST', '/pipeline-agent/runs', { token, body: { instruction: 'slow' } });
    await ctx.llm.whenHeld();
    const id = started.body.id as string;
    const cancel = await ctx.server.request('POST', `/pipeline-agent/runs/${id}/cancel`, { token });
    expectStatus(cancel, 202).toEqual({ agent_run_id: id, status: 'cancelling' });
    ctx.llm.release();
    await eventually(async () => ((await ctx.server.request('GET', `/pipeline-agent/runs/${id}`, { token })).body.status === 'cancelled' ? true : undefined));
  });
});
