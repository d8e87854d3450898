/** /pipelines and /pipeline-agent against the real server: definitions, runs, pipeline-scoped tokens, reports. */
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const ctx = useOneOrg({}, { name: 'Pipelines Org' });

async function startRun(session: Session = ctx.owner, name = `p-${Math.random().toString(36).slice(2, 8)}`) {
  const pipeline = await ctx.server.request('POST', '/pipelines', { token: session.token, body: { name, definition: { steps: ['scan'] } } });
  expect(pipeline.status).toBe(201);
  const started = await ctx.server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: session.token, body: { parameters: { day: 1 } } });
  expect(started.status).toBe(201);
  return { pipelineId: pipeline.body.id as string, runId: started.body.run.id as string, token: started.body.token as string };
}

describe('/pipelines definitions', () => {
  it('creates, reads, lists, patches (version bump) and deletes; duplicate names are 409', async () => {
    const created = await ctx.server.request('POST', '/pipelines', { token: ctx.owner.token, body: { name: 'nightly', description: 'graph refresh' } });
    expectStatus(created, 201).toMatchObject({ name: 'nightly', realm: 'default', definition: {}, version: 1 });
    expect((await ctx.server.request('POST', '/pipelines', { token: ctx.owner.token, body: { name: 'nightly' } })).status).toBe(409);
    const patched = await ctx.server.request('PATCH', `/pipelines/${created.body.id as string}`, {
      token: ctx.owner.token,
      body: { definition: { steps: ['a'] } },
    });
    expect(patched.body).toMatchObject({ name: 'nightly', description: 'graph refresh', version: 2, definition: { steps: ['a'] } });
    const list = await ctx.server.request('GET', '/pipelines', { token: ctx.owner.token });
    expect(list.body.items.map((item: { name: string }) => item.name)).toContain('nightly');
    expect((await ctx.server.request('DELETE', `/pipelines/${created.body.id as string}`, { token: ctx.owner.token })).status).toBe(204);
    expect((await ctx.server.request('GET', `/pipelines/${created.body.id as string}`, { token: ctx.owner.token })).status).toBe(404);
  });

  it('validates bodies (400) and keeps organizations apart (404)', async () => {
    const bad = await ctx.server.request('POST', '/pipelines', { token: ctx.owner.token, body: { name: '../x' } });
    expectError(bad, 400, 'validation_error');
    const { pipelineId, runId } = await startRun();
    const other = await ctx.server.register('Other Pipelines Org');
    expect((await ctx.server.request('GET', `/pipelines/${pipelineId}`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('POST', `/pipelines/${pipelineId}/runs`, { token: other.token, body: {} })).status).toBe(404);
  });
});

describe('pipeline runs and /pipeline-agent', () => {
  it('log and progress reports show up in the run record, in order', async () => {
    const { pipelineId, runId, token } = await startRun();
    expect((await ctx.server.request('POST', '/pipeline-agent/log', { token, body: { message: 'scanning', phase: 'scan' } })).body).toEqual({
      run_id: runId,
      seq: 1,
    });
    await ctx.server.request('POST', '/pipeline-agent/progress', { token, body: { fraction: 0.5, message: 'half way', phase: 'scan' } });
    await ctx.server.request('POST', '/pipeline-agent/log', { token, body: { message: 'wrote 10 nodes', level: 'graph' } });

    const run = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: ctx.owner.token });
    expectStatus(run, 200).toMatchObject({ status: 'running', log_count: 3, phase: 'scan', progress: { fraction: 0.5, message: 'half way', phase: 'scan' } });
    expect(run.body.entries.map((entry: { seq: number; kind: string; level: string }) => [entry.seq, entry.kind, entry.level])).toEqual([
      [1, 'log', 'info'],
      [2, 'progress', 'info'],
      [3, 'log', 'graph'],
    ]);
    const after = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}/entries?after=2`, { token: ctx.owner.token });
    expect(after.body.items.map((entry: { message: string }) => entry.message)).toEqual(['wrote 10 nodes']);

    const status = await ctx.server.request('GET', '/pipeline-agent/status', { token });
    expect(status.body).toMatchObject({ connected: true, token_kind: 'pipeline', run: { id: runId, last_entry: { seq: 3 } } });
  });

  it('rejects a bad level, a fraction out of range and an empty message with 400', async () => {
    const { token } = await startRun();
    for (const [path, body] of [
      ['/pipeline-agent/log', { message: 'x', level: 'loud' }],
      ['/pipeline-agent/log', { message: '' }],
      ['/pipeline-agent/progress', { fraction: 1.5 }],
      ['/pipeline-agent/progress', { fraction: -0.1 }],
    ] as const) {
      const response = await ctx.server.request('POST', path, { token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
  });

  it('a pipeline token reaches files but not other routes, and reports only to its own run', async () => {
    const first = await startRun();
    const second = await startRun();
    const upload = await ctx.server.request('PUT', '/files/content?path=out/result.txt', { token: first.token, body: Buffer.from('ok') });
    expect(upload.status).toBe(201);
    const denied = await ctx.server.request('GET', '/pipelines', { token: first.token });
    expect(denied.status).toBe(403);
    expect((await ctx.server.request('GET', '/realms', { token: first.token })).status).toBe(403);
    // routes open to any signed-in person are not open to a pipeline token
    expect((await ctx.server.request('POST', '/platform/organizations', { token: first.token, body: { name: 'escape' } })).status).toBe(403);
    expect((await ctx.server.request('GET', '/platform/organizations', { token: first.token })).status).toBe(403);
    const crossRun = await ctx.server.request('POST', '/pipeline-agent/log', { token: first.token, body: { message: 'x', run_id: second.runId } });
    expect(crossRun.status).toBe(403);
  });

  it('a pipeline token never holds more than its user: a viewer-started token cannot write files', async () => {
    const { pipelineId } = await startRun();
    const member = await addMember(ctx.server, ctx.owner, 'admin');
    const started = await ctx.server.request('POST', `/pipelines/${pipelineId}/runs`, { token: member.token, body: {} });
    expect(started.status).toBe(201);
    // the admin is demoted to viewer after the run started: the token follows the role
    const users = await ctx.server.request('GET', '/users', { token: ctx.owner.token });
    const membership = (users.body.items as { id: string; email: string }[]).find((user) => user.email === member.email);
    expect(membership).toBeDefined();
    const demoted = await ctx.server.request('PATCH', `/users/${membership!.id}`, { token: ctx.owner.token, body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    const token = started.body.token as string;
    expect((await ctx.server.request('PUT', '/files/content?path=x.txt', { token, body: Buffer.from('x') })).status).toBe(403);
    expect((await ctx.server.request('GET', '/files', { token })).status).toBe(200);
  });

  it('a login token reports to a run it names (with pipeline:manage); without run_id it is 400', async () => {
    const { pipelineId, runId } = await startRun();
    const named = await ctx.server.request('POST', '/pipeline-agent/log', { token: ctx.owner.token, body: { message: 'from a person', run_id: runId } });
    expect(named.status).toBe(201);
    const unnamed = await ctx.server.request('POST', '/pipeline-agent/log', { token: ctx.owner.token, body: { message: 'x' } });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.details).toEqual({ field: 'run_id' });
    const viewer = await addMember(ctx.server, ctx.owner, 'viewer');
    expect((await ctx.server.request('POST', '/pipeline-agent/log', { token: viewer.token, body: { message: 'x', run_id: runId } })).status).toBe(403);
    const status = await ctx.server.request('GET', `/pipeline-agent/status?run_id=${runId}`, { token: ctx.owner.token });
    expect(status.body).toMatchObject({ token_kind: 'user', run: { id: runId, log_count: 1 } });
    expect((await ctx.server.request('GET', `/pipeline-agent/status?run_id=${runId}`, { token: viewer.token })).status).toBe(200);
    const other = await ctx.server.register('Foreign Org');
    expect((await ctx.server.request('POST', '/pipeline-agent/log', { token: other.token, body: { message: 'x', run_id: runId } })).status).toBe(404);
    const run = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: ctx.owner.token });
    expect(run.body.log_count).toBe(1);
  });

  it('a finished or cancelled run takes no more reports (its token answers 401); finishing twice is 409', async () => {
    const { pipelineId, runId, token } = await startRun();
    const finished = await ctx.server.request('POST', `/pipelines/${pipelineId}/runs/${runId}/finish`, {
      token: ctx.owner.token,
      body: { status: 'succeeded' },
    });
    expect(finished.body).toMatchObject({ status: 'succeeded' });
    expect(typeof finished.body.finished_at).toBe('string');
    const late = await ctx.server.request('POST', '/pipeline-agent/log', { token, body: { message: 'late' } });
    expect(late.status).toBe(401);
    expect((await ctx.server.request('POST', `/pipelines/${pipelineId}/runs/${runId}/cancel`, { token: ctx.owner.token })).status).toBe(409);

    const second = await startRun();
    const cancelled = await ctx.server.request('POST', `/pipelines/${second.pipelineId}/runs/${second.runId}/cancel`, { token: ctx.owner.token });
    expect(cancelled.body.status).toBe('cancelled');
    expect((await ctx.server.request('POST', '/pipeline-agent/progress', { token: second.token, body: { fraction: 1 } })).status).toBe(401);
    const runs = await ctx.server.request('GET', `/pipelines/${second.pipelineId}/runs`, { token: ctx.owner.token });
    expect(runs.body.items.map((run: { id: string }) => run.id)).toEqual([second.runId]);
  });

  it('a run still running when its token expires is failed: it shows as failed and takes no reports', async () => {
    const { pipelineId, runId, token } = await startRun();
    const org = ctx.owner.organization.id as Parameters<typeof ctx.server.service.services.pipelineRuns.get>[0];
    // the executor vanished: move the run's deadline into the past instead of waiting for it
    const expiresAt = new Date(Date.now() - 1000).toISOString();
    await ctx.server.service.services.collections.pipelineRuns.update(org, runId, { token_expires_at: expiresAt });
    const runs = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs`, { token: ctx.owner.token });
    expect(runs.body.items[0]).toMatchObject({ id: runId, status: 'failed', finished_at: expiresAt, error: expect.stringContaining('expired') });
    expect((await ctx.server.request('POST', '/pipeline-agent/log', { token, body: { message: 'late' } })).status).toBe(401);
    expect((await ctx.server.request('DELETE', `/pipelines/${pipelineId}`, { token: ctx.owner.token })).status).toBe(204);
  });

  it('a pipeline with a running run cannot be deleted (409)', async () => {
    const { pipelineId } = await startRun();
    expect((await ctx.server.request('DELETE', `/pipelines/${pipelineId}`, { token: ctx.owner.token })).status).toBe(409);
  });

  it('a forged pipeline token or none at all is 401', async () => {
    const { token } = await startRun();
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(43)}`;
    expect((await ctx.server.request('GET', '/pipeline-agent/status', { token: forged })).status).toBe(401);
    expect((await ctx.server.request('GET', '/pipeline-agent/status')).status).toBe(401);
  });
});
