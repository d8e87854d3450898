/**
 * The worker routes: WORKER_TOKEN auth (missing, wrong, a user's JWT, unset
 * on the server), register / heartbeat / claim / complete, the fence, and
 * GET /workers/status's shape and permission.
 */
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { useOneOrg, useSuite } from '../helpers/suite.js';
import { WORKER_TOKEN, WORKERS_ENV } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';
import { simulatedClock } from '../helpers/clock.js';

// a JetStream queue outlives the suite: job ids are new on every run
const JOB = `job-routes-${Date.now().toString(36)}`;
const worker = { token: WORKER_TOKEN };

describe('worker token', () => {
  const ctx = useOneOrg(WORKERS_ENV);

  it('refuses a missing token, a wrong one and a user JWT with 401', async () => {
    const body = { queues: ['agent'], slots: 1 };
    const missing = await ctx.server.request('POST', '/workers/register', { body });
    expectError(missing, 401, 'unauthorized');
    const wrong = await ctx.server.request('POST', '/workers/register', { body, token: WORKER_TOKEN.replace(/.$/, 'x') });
    expect(wrong.status).toBe(401);
    const user = await ctx.server.request('POST', '/workers/register', { body, token: ctx.owner.token });
    expect(user.status).toBe(401);
    const right = await ctx.server.request('POST', '/workers/register', { body, ...worker });
    expect(right.status).toBe(201);
  });

  it('does not let the worker token read user routes', async () => {
    const status = await ctx.server.request('GET', '/workers/status', worker);
    expect(status.status).toBe(401);
    const realms = await ctx.server.request('GET', '/realms', worker);
    expect(realms.status).toBe(401);
  });
});

describe('worker token unset', () => {
  const ctx = useSuite(async (own) => ({ server: own(await startTestServer({ SERVICE_FEATURES_WORKERS: 'true' })) }));

  it('answers 401 saying WORKER_TOKEN is not configured', async () => {
    const response = await ctx.server.request('POST', '/workers/register', { body: { queues: ['agent'] }, token: 'anything-at-all-here' });
    expect(response.status).toBe(401);
    expect(response.body.error.message).toMatch(/WORKER_TOKEN is not configured/);
  });
});

describe('workers feature off', () => {
  const ctx = useOneOrg({ WORKER_TOKEN });

  it('answers 404 feature_disabled on the worker routes and the status', async () => {
    const register = await ctx.server.request('POST', '/workers/register', { body: { queues: ['agent'] }, ...worker });
    expectError(register, 404, 'feature_disabled');
    const status = await ctx.server.request('GET', '/workers/status', { token: ctx.owner.token });
    expect(status.body.error.code).toBe('feature_disabled');
  });
});

describe('register, heartbeat, claim, status', () => {
  const ctx = useOneOrg(WORKERS_ENV);

  it('registers, heartbeats and lists the worker with its queues and slots', async () => {
    const registered = await ctx.server.request('POST', '/workers/register', { body: { name: 'w1', queues: ['agent', 'ingest'], slots: 2 }, ...worker });
    expectStatus(registered, 201).toMatchObject({ name: 'w1', queues: ['agent', 'ingest'], slots: 2, lease_ttl_s: 2 });
    const id = registered.body.id as string;
    const beat = await ctx.server.request('POST', `/workers/${id}/heartbeat`, worker);
    expect(beat.status).toBe(200);
    const status = await ctx.server.request('GET', '/workers/status', { token: ctx.owner.token });
    expect(status.status).toBe(200);
    const listed = status.body.workers.find((entry: { id: string }) => entry.id === id);
    expect(listed).toMatchObject({ id, name: 'w1', queues: ['agent', 'ingest'], slots: 2, alive: true });
    expect(typeof listed.last_heartbeat).toBe('string');
    expect(Object.keys(status.body.queues).sort()).toEqual(['agent', 'graph-maintenance', 'ingest', 'render', 'voice']);
    expect(status.body.queues.agent).toEqual({ depth: 0, inflight: 0, oldest_pending_s: null, redelivered: 0, dead_letters: 0 });
  });

  it('answers 404 to the heartbeat of an unknown worker (it registers again)', async () => {
    const response = await ctx.server.request('POST', '/workers/wrk_01JAAAAAAAAAAAAAAAAAAAAAAA/heartbeat', worker);
    expect(response.status).toBe(404);
  });

  it('leases a job with a fence, refuses a stale fence with 409 lease_lost, and completes once', async () => {
    const { workers } = ctx.server.service.services;
    await workers.queue.enqueue({ id: JOB, queue: 'render', orgId: ctx.owner.organization.id, kind: 'test_sleep', payload: { ms: 0 } });
    const registered = await ctx.server.request('POST', '/workers/register', { body: { queues: ['render'] }, ...worker });
    const claim = await ctx.server.request('POST', `/workers/${registered.body.id}/claim`, { body: { max: 5, wait_ms: 1000 }, ...worker });
    expect(claim.status).toBe(200);
    expect(claim.body.jobs).toHaveLength(1);
    const job = claim.body.jobs[0];
    expect(job).toMatchObject({ id: JOB, queue: 'render', kind: 'test_sleep', org_id: ctx.owner.organization.id, delivery: 1 });
    const stale = await ctx.server.request('POST', `/workers/jobs/${JOB}/complete`, { body: { fence: `${job.fence}9`, result: {} }, ...worker });
    expectError(stale, 409, 'lease_lost');
    const renewed = await ctx.server.request('POST', `/workers/jobs/${JOB}/renew`, { body: { fence: job.fence }, ...worker });
    expect(renewed.status).toBe(200);
    const done = await ctx.server.request('POST', `/workers/jobs/${JOB}/complete`, { body: { fence: job.fence, result: { ok: true } }, ...worker });
    expectStatus(done, 200).toMatchObject({ state: 'done', deliveries: 1 });
    const again = await ctx.server.request('POST', `/workers/jobs/${JOB}/complete`, { body: { fence: job.fence, result: { ok: true } }, ...worker });
    expect(again.status).toBe(409);
  });

  it('bounds the claim wait and the body', async () => {
    const registered = await ctx.server.request('POST', '/workers/register', { body: { queues: ['voice'] }, ...worker });
    const tooLong = await ctx.server.request('POST', `/workers/${registered.body.id}/claim`, { body: { wait_ms: 30_001 }, ...worker });
    expect(tooLong.status).toBe(400);
    const badQueue = await ctx.server.request('POST', '/workers/register', { body: { queues: ['nope'] }, ...worker });
    expect(badQueue.status).toBe(400);
  });
});

describe('worker liveness (simulated clock)', () => {
  const clock = simulatedClock('2026-11-24T12:00:00Z');
  // WORKERS_ENV: a 2 s lease, so a worker is alive while its last heartbeat is younger than 2 s
  const ctx = useOneOrg(WORKERS_ENV, { clock });

  it('a worker whose heartbeats stop is listed not alive and work needing it answers 503; a heartbeat revives it; ten leases later it is forgotten', async () => {
    const { server, owner } = ctx;
    const registered = await server.request('POST', '/workers/register', { body: { name: 'lapsing', queues: ['agent'], slots: 3 }, ...worker });
    const id = registered.body.id as string;
    const task = await server.request('POST', '/tasks', {
      token: owner.token,
      body: { name: 'local', trigger: { kind: 'webhook' }, input: { instruction: 'x' } },
    });
    expect(task.status).toBe(201);
    const listed = async () =>
      (await server.request('GET', '/workers/status', { token: owner.token })).body.workers.find((entry: { id: string }) => entry.id === id);
    expect(await listed()).toMatchObject({ alive: true, slots: 3, last_heartbeat: '2026-11-24T12:00:00.000Z' });

    clock.increment(2_000);
    expect(await listed()).toMatchObject({ alive: false, last_heartbeat: '2026-11-24T12:00:00.000Z' });
    const refused = await server.request('POST', `/tasks/${task.body.id as string}/run`, { token: owner.token });
    expectError(refused, 503, 'worker_unavailable');
    expect(refused.body.error.details).toEqual({ queue: 'agent' });
    const runs = await server.request('GET', `/tasks/${task.body.id as string}/runs`, { token: owner.token });
    expect(runs.body.items).toEqual([]);

    expect((await server.request('POST', `/workers/${id}/heartbeat`, worker)).status).toBe(200);
    expect(await listed()).toMatchObject({ alive: true, last_heartbeat: '2026-11-24T12:00:02.000Z' });

    clock.increment(20_001);
    expect(await listed()).toBeUndefined();
    expect((await server.request('POST', `/workers/${id}/heartbeat`, worker)).status).toBe(404);
  });
});
