/**
 * Large ingest bodies on the `ingest` queue (feature workers), on the
 * in-process queue and on JetStream (NATS on 127.0.0.1:4222, else a SKIP
 * line): 503 worker_unavailable with no worker (nothing spooled, no run); a
 * body below INGEST_WORKER_MIN_BYTES still answered at once; 202 {run_id,
 * status: queued}, the run pending -> succeeded once a real worker process
 * sent the rows back; a bad line -> failed bad_ndjson; a stale fence 409
 * lease_lost; a worker SIGKILLed mid-job, finished by another, rows written
 * once; a job failing on every delivery ends its run failed (dead letters);
 * a gateway restart with a job outstanding, finished after it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { expectError, expectStatus } from '../helpers/expect-status.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { createPipeline, ingest, ndjson, rowsOf } from '../ingest/helpers.js';
import { startWorker, WORKER_TOKEN, type WorkerProcess } from './helpers.js';

const INGEST_HOLD = new URL('./fixtures/ingest-handlers.ts', import.meta.url).pathname;
const INGEST_FAILING = new URL('./fixtures/failing-ingest-handlers.ts', import.meta.url).pathname;
const natsUrl = 'nats://127.0.0.1:4222';
const natsUp = await connect({ servers: natsUrl, timeout: 1_000, reconnect: false }).then(
  async (nc) => {
    await nc.close();
    return true;
  },
  () => false,
);

const baseEnv = (nats: boolean): Record<string, string> => ({
  SERVICE_FEATURES_WORKERS: 'true',
  WORKER_TOKEN,
  WORKER_LEASE_TTL: '2',
  INGEST_WORKER_MIN_BYTES: '1000',
  JWT_SECRET: randomBytes(32).toString('hex'),
  ...(nats ? { NATS_URL: natsUrl, NATS_STREAM_PREFIX: `tiq${randomBytes(4).toString('hex')}` } : {}),
});

/** `count` rows of about 60 bytes each */
const body = (tag: string, count: number): string =>
  // the big number is written as text: JSON.stringify would round it before it is sent
  ndjson(Array.from({ length: count }, (_, index) => ({ label: tag, body: `row ${index} of ${tag}`, n: index, big: 'BIG' }))).replace(
    /"BIG"/g,
    '12345678901234567890',
  );

const queues = natsUp ? (['in-process', 'jetstream'] as const) : (['in-process'] as const);
if (!natsUp) console.log(`SKIP ingest queue on jetstream (no NATS server answers on ${natsUrl})`);

describe.each(queues)('large ingest bodies on the ingest queue (%s)', { timeout: 180_000 }, (kind) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingestq-'));
  const env = baseEnv(kind === 'jetstream');
  let server: TestServer;
  let owner: Session;
  const started: WorkerProcess[] = [];
  const worker = (args: string[] = []): WorkerProcess => {
    const process = startWorker(server.url, ['--queues', 'ingest', ...args]);
    started.push(process);
    return process;
  };
  const spooled = (): string[] => readdirSync(join(dataDir, 'ingest-queue'));
  const runs = async (pipelineId: string) => (await server.request('GET', `/context/pipelines/${pipelineId}/runs`, { token: owner.token })).body.items;
  const runEnded = (pipelineId: string, runId: number) =>
    eventually(
      async () => {
        const run = (await runs(pipelineId)).find((item: { run_id: number }) => item.run_id === runId);
        return run && run.status !== 'pending' ? run : undefined;
      },
      { what: `run ${runId} ended`, timeout: 60_000 },
    );

  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.kill()));
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 worker_unavailable with no worker on ingest: nothing spooled, no run; a small body is still written at once', async () => {
    server = await startTestServer(env, { dataDir });
    owner = await server.register('Ingest queue');
    const pipeline = await createPipeline(server, owner);
    expectError(await ingest(server, pipeline.token, body('refused', 40)), 503, 'worker_unavailable');
    expect(spooled()).toEqual([]);
    expect(await runs(pipeline.pipelineId)).toEqual([]);
    const small = await ingest(server, pipeline.token, body('small', 3));
    expectStatus(small, 200).toMatchObject({ rows_in: 3, rows_out: 3 });
  });

  it('queues a large body (202), a worker normalizes it, the gateway writes it: pending -> succeeded, stale fences 409', async () => {
    const one = worker();
    await one.logged('worker registered');
    const pipeline = await createPipeline(server, owner, { target_table: 'context_events', realm: 'default' });
    const payload = body('queued', 40).replace(/\n/g, '\r\n');
    expect(payload.length).toBeGreaterThan(1000);
    const accepted = await ingest(server, pipeline.token, payload, { 'idempotency-key': 'big-1' });
    expectStatus(accepted, 202).toEqual({ run_id: expect.any(Number), status: 'queued' });
    const runId = accepted.body.run_id as number;
    const listed = (await runs(pipeline.pipelineId)).find((item: { run_id: number }) => item.run_id === runId);
    expect(['pending', 'succeeded']).toContain(listed.status);
    const done = await runEnded(pipeline.pipelineId, runId);
    expect(done).toMatchObject({ status: 'succeeded', rows_in: 40, rows_out: 40, error: null, idempotency_key: 'big-1' });
    expect(typeof done.finished_at).toBe('string');
    const rows = (await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'queued');
    expect(rows).toHaveLength(40);
    // values are sent as written: a number past 2^53 keeps its digits
    expect(rows[0]?.['big']).toBe('12345678901234567890');
    await eventually(() => (spooled().length === 0 ? true : undefined), { what: 'the spool removed' });

    // the same Idempotency-Key again: the committed result, not a second write
    const retry = await ingest(server, pipeline.token, payload, { 'idempotency-key': 'big-1' });
    expectStatus(retry, 200).toMatchObject({ run_id: runId, rows_out: 40 });
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'queued')).toHaveLength(40);

    // the job's fence is spent: its routes refuse it before anything is read or written
    const jobLine = await one.logged('job completed');
    const jobId = String(jobLine['job_id']);
    const stale = await server.request('POST', `/workers/jobs/${jobId}/ingest-rows?fence=${encodeURIComponent(String(jobLine['fence']))}`, {
      token: WORKER_TOKEN,
      body: body('late', 2),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expectError(stale, 409, 'lease_lost');
    expectError(await server.request('GET', `/workers/jobs/${jobId}/ingest-body?fence=99.9`, { token: WORKER_TOKEN }), 409, 'lease_lost');
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'late')).toHaveLength(0);
    // a user's credential is not a worker's
    expectError(await server.request('GET', `/workers/jobs/${jobId}/ingest-body?fence=1`, { token: owner.token }), 401, 'unauthorized');
  });

  it('ends the run failed with bad_ndjson naming the line when the worker refuses the body', async () => {
    const one = worker();
    await one.logged('worker registered');
    const pipeline = await createPipeline(server, owner);
    const lines = body('bad', 30).split('\n');
    lines[6] = '{"label": "broken", ';
    const accepted = await ingest(server, pipeline.token, lines.join('\n'));
    expectStatus(accepted, 202);
    const failed = await runEnded(pipeline.pipelineId, accepted.body.run_id as number);
    expect(failed).toMatchObject({ status: 'failed', error_code: 'bad_ndjson', rows_out: 0 });
    expect(failed.error).toMatch(/^line 7 /);
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'bad')).toHaveLength(0);
  });

  it('ends the run failed once its job failed on every delivery (dead letters), writing nothing', async () => {
    const failing = worker(['--handlers', INGEST_FAILING]);
    await failing.logged('worker registered');
    const pipeline = await createPipeline(server, owner);
    const accepted = await ingest(server, pipeline.token, body('dead', 40));
    expectStatus(accepted, 202);
    const failed = await runEnded(pipeline.pipelineId, accepted.body.run_id as number);
    expect(failed).toMatchObject({ status: 'failed', error_code: 'internal_error', rows_out: 0 });
    expect(failed.error).toMatch(/failed on each of its \d+ deliveries: this worker cannot parse anything/);
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'dead')).toHaveLength(0);
    await eventually(() => (spooled().length === 0 ? true : undefined), { what: 'the spool removed' });
    const status = await server.request('GET', '/workers/status', { token: owner.token });
    expect(status.body.queues.ingest.dead_letters).toBeGreaterThanOrEqual(1);
  });

  it('lets a second worker finish the job of one SIGKILLed mid-job: the rows are written once', async () => {
    const first = worker(['--handlers', INGEST_HOLD]);
    await first.logged('worker registered');
    const pipeline = await createPipeline(server, owner);
    const accepted = await ingest(server, pipeline.token, body('killed', 40));
    expectStatus(accepted, 202);
    const startedLine = await first.logged('job started', { kind: 'ingest_body' });
    const second = worker();
    await second.logged('worker registered');
    await first.kill();
    const redelivered = await second.logged('job started', { job_id: startedLine['job_id'] });
    expect(redelivered['delivery']).toBeGreaterThan(1);
    const done = await runEnded(pipeline.pipelineId, accepted.body.run_id as number);
    expect(done).toMatchObject({ status: 'succeeded', rows_out: 40 });
    expect(await runs(pipeline.pipelineId)).toHaveLength(1);
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'killed')).toHaveLength(40);
  });

  it('finishes a queued body after a gateway restart', async () => {
    const held = worker(['--handlers', INGEST_HOLD]);
    await held.logged('worker registered');
    const pipeline = await createPipeline(server, owner);
    const accepted = await ingest(server, pipeline.token, body('restart', 40));
    expectStatus(accepted, 202);
    await held.logged('job started', { kind: 'ingest_body' });
    await held.kill();
    await server.service.stop();
    server = await startTestServer(env, { dataDir });
    const listed = (await runs(pipeline.pipelineId)).find((item: { run_id: number }) => item.run_id === accepted.body.run_id);
    expect(listed).toMatchObject({ status: 'pending', finished_at: null });
    const fresh = startWorker(server.url, ['--queues', 'ingest']);
    started.push(fresh);
    const done = await runEnded(pipeline.pipelineId, accepted.body.run_id as number);
    expect(done).toMatchObject({ status: 'succeeded', rows_out: 40 });
    expect((await rowsOf(server, owner, 'context_events')).filter((row) => row['label'] === 'restart')).toHaveLength(40);
  });
});
