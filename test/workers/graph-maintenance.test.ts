/**
 * Graph maintenance through the `graph-maintenance` queue: 503 with no
 * worker, 202 and a job a real worker process takes (the engine work done in
 * the gateway under the worker's lease), its status to succeeded, visible in
 * /workers/status; admins and owners only; another organization's job is 404;
 * a stale fence on the engine route is 409 lease_lost.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { expectError, expectStatus } from '../helpers/expect-status.js';
import { addMember } from '../helpers/members.js';
import { useTwoOrgs } from '../helpers/suite.js';
import { startWorker, WORKER_TOKEN, WORKERS_ENV, type WorkerProcess } from './helpers.js';

describe('graph maintenance on workers', { timeout: 120_000 }, () => {
  const ctx = useTwoOrgs(WORKERS_ENV);
  const started: WorkerProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((process) => process.kill()));
  });
  const rebuild = (token: string, body: Record<string, unknown> = { operation: 'rebuild_indexes' }) =>
    ctx.server.request('POST', '/graph/maintenance', { token, body });

  it('answers 503 worker_unavailable while no worker serves the queue, and queues nothing', async () => {
    const before = (await ctx.server.request('GET', '/workers/status', { token: ctx.alice.token })).body.queues['graph-maintenance'];
    expectError(await rebuild(ctx.alice.token), 503, 'worker_unavailable');
    const after = (await ctx.server.request('GET', '/workers/status', { token: ctx.alice.token })).body.queues['graph-maintenance'];
    expect(after.depth).toBe(before.depth);
  });

  it('refuses members (owner and admin only) and unknown operations or realms', async () => {
    const member = await addMember(ctx.server, ctx.alice, 'member');
    expectError(await rebuild(member.token), 403, 'forbidden');
    expectError(await rebuild(ctx.alice.token, { operation: 'vacuum' }), 400, 'validation_error');
    expectError(await rebuild(ctx.alice.token, { operation: 'rebuild_indexes', realm: 'nope' }), 404, 'not_found');
  });

  it('rebuilds the indexes on a worker: 202, queued -> succeeded, search still answers', async () => {
    const nodes = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.alice.token,
      body: { nodes: [{ label: 'Service', properties: { _key: 'payments', name: 'Payments API' } }] },
    });
    expectStatus(nodes, 200);
    // the full-text index exists once searched
    expect((await ctx.server.request('GET', '/graph/search?query=payments', { token: ctx.alice.token })).body.total).toBe(1);
    const worker = startWorker(ctx.server.url, ['--queues', 'graph-maintenance']);
    started.push(worker);
    await worker.logged('worker registered');
    const admin = await addMember(ctx.server, ctx.alice, 'admin');
    const accepted = await rebuild(admin.token);
    expectStatus(accepted, 202).toMatchObject({ realm: 'default', operation: 'rebuild_indexes', result: null });
    const id = accepted.body.id as string;
    expect(['queued', 'running', 'succeeded']).toContain(accepted.body.status);
    await worker.logged('job completed', { job_id: id });
    const done = await eventually(
      async () => {
        const response = await ctx.server.request('GET', `/graph/maintenance/${id}`, { token: ctx.alice.token });
        return response.body.status === 'succeeded' ? response : undefined;
      },
      { what: 'the rebuild succeeded' },
    );
    expectStatus(done, 200).toMatchObject({ id, status: 'succeeded', deliveries: 1, result: { labels: ['Service'] }, error: null });
    expect((await ctx.server.request('GET', '/graph/search?query=payments', { token: ctx.alice.token })).body.total).toBe(1);

    const status = await ctx.server.request('GET', '/workers/status', { token: ctx.alice.token });
    expect(status.body.workers.some((w: { queues: string[]; alive: boolean }) => w.alive && w.queues.includes('graph-maintenance'))).toBe(true);
    expect(status.body.queues['graph-maintenance']).toMatchObject({ depth: 0, inflight: 0 });

    // another organization's job is 404; a stale fence on the engine route is refused before the engine is touched
    expectError(await ctx.server.request('GET', `/graph/maintenance/${id}`, { token: ctx.bob.token }), 404, 'not_found');
    const stale = await ctx.server.request('POST', `/workers/jobs/${id}/graph-maintenance`, { token: WORKER_TOKEN, body: { fence: '999999.9' } });
    expectError(stale, 409, 'lease_lost');
  });
});
