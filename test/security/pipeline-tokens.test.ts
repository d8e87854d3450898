/**
 * A pipeline-scoped token lives only while its run runs: once the run has
 * succeeded, failed, been cancelled or passed its deadline, every route it
 * reached (/pipeline-agent/*, and the graph/file routes of its permissions)
 * answers 401.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import type { OrgId } from '../../runtime/store/types.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

const ctx = useOneOrg({}, { name: 'Pipeline Token Org' });

async function startRun(session: Session = ctx.owner): Promise<{ pipelineId: string; runId: string; token: string }> {
  const pipeline = await ctx.server.request('POST', '/pipelines', { token: session.token, body: { name: `p-${Math.random().toString(36).slice(2, 8)}` } });
  expect(pipeline.status, pipeline.text).toBe(201);
  const started = await ctx.server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: session.token, body: {} });
  expect(started.status, started.text).toBe(201);
  return { pipelineId: pipeline.body.id as string, runId: started.body.run.id as string, token: started.body.token as string };
}

/** Every kind of route a pipeline token reaches, with the status it answers while the run is live. */
const reach = (token: string) => [
  () => ctx.server.request('GET', '/pipeline-agent/status', { token }),
  () => ctx.server.request('POST', '/pipeline-agent/log', { token, body: { message: 'still here?' } }),
  () => ctx.server.request('POST', '/pipeline-agent/progress', { token, body: { fraction: 0.9 } }),
  () => ctx.server.request('GET', '/files', { token }),
];

async function expectAlive(token: string): Promise<void> {
  for (const call of reach(token)) {
    const response = await call();
    expect(response.status, response.text).toBeLessThan(300);
  }
}

async function expectDead(token: string): Promise<void> {
  for (const call of reach(token)) {
    const response = await call();
    expectError(response, 401, 'unauthorized');
    expect(response.body.error.message).toContain('pipeline run');
  }
}

describe('a pipeline token dies with its run', () => {
  it.each([
    [
      'succeeded',
      (p: string, r: string) => ctx.server.request('POST', `/pipelines/${p}/runs/${r}/finish`, { token: ctx.owner.token, body: { status: 'succeeded' } }),
    ],
    [
      'failed',
      (p: string, r: string) =>
        ctx.server.request('POST', `/pipelines/${p}/runs/${r}/finish`, { token: ctx.owner.token, body: { status: 'failed', error: 'boom' } }),
    ],
    ['cancelled', (p: string, r: string) => ctx.server.request('POST', `/pipelines/${p}/runs/${r}/cancel`, { token: ctx.owner.token })],
  ])('after the run is %s every route answers 401', async (status, end) => {
    const { pipelineId, runId, token } = await startRun();
    await expectAlive(token);
    const ended = await end(pipelineId, runId);
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body.status).toBe(status);
    await expectDead(token);
    // the run itself stays readable to people, with what was reported before the end
    const run = await ctx.server.request('GET', `/pipelines/${pipelineId}/runs/${runId}`, { token: ctx.owner.token });
    expect(run.body).toMatchObject({ status, log_count: 2 });
  });

  it('a run past its deadline: the token is refused even before anyone reads the run', async () => {
    const { runId, token } = await startRun();
    await expectAlive(token);
    await ctx.server.service.services.collections.pipelineRuns.update(ctx.owner.organization.id as OrgId, runId, {
      token_expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    await expectDead(token);
  });

  it("ending one run leaves another run's token and the user's own token working", async () => {
    const first = await startRun();
    const second = await startRun();
    expect((await ctx.server.request('POST', `/pipelines/${first.pipelineId}/runs/${first.runId}/cancel`, { token: ctx.owner.token })).status).toBe(200);
    await expectDead(first.token);
    await expectAlive(second.token);
    expect((await ctx.server.request('GET', '/files', { token: ctx.owner.token })).status).toBe(200);
  });

  it('a deleted run (its pipeline gone) takes its token with it', async () => {
    const { pipelineId, runId, token } = await startRun();
    expect(
      (await ctx.server.request('POST', `/pipelines/${pipelineId}/runs/${runId}/finish`, { token: ctx.owner.token, body: { status: 'succeeded' } })).status,
    ).toBe(200);
    await ctx.server.service.services.collections.pipelineRuns.delete(ctx.owner.organization.id as OrgId, runId);
    const response = await ctx.server.request('GET', '/pipeline-agent/status', { token });
    expect(response.status).toBe(401);
  });

  it('survives a restart while the run runs, and dies when it is cancelled after the restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-prun-'));
    const env = { JWT_SECRET: randomBytes(32).toString('hex') };
    let first: TestServer | null = await startTestServer(env, { dataDir });
    try {
      const session = await first.register('Restart Pipeline Org');
      const pipeline = await first.request('POST', '/pipelines', { token: session.token, body: { name: 'restart' } });
      const started = await first.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: session.token, body: {} });
      const token = started.body.token as string;
      await first.stop();
      first = null;
      const second = await startTestServer(env, { dataDir });
      try {
        expect((await second.request('GET', '/pipeline-agent/status', { token })).status).toBe(200);
        const cancel = await second.request('POST', `/pipelines/${pipeline.body.id as string}/runs/${started.body.run.id as string}/cancel`, {
          token: session.token,
        });
        expect(cancel.status, cancel.text).toBe(200);
        expect((await second.request('GET', '/pipeline-agent/status', { token })).status).toBe(401);
      } finally {
        await second.stop();
      }
    } finally {
      await first?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
