import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { request } from '../helpers/server.js';
import { ndjson } from './helpers.js';
import { expectStatus } from '../helpers/expect-status.js';

describe('kill -9 after a 200 loses nothing', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctx-kill-'));
  const env = { DATA_DIR: dataDir, JWT_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' };
  const running: ServerProcess[] = [];

  afterAll(async () => {
    for (const server of running) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged row and run across a SIGKILL and restart on the same DATA_DIR', async () => {
    const first = await startServerProcess(env);
    running.push(first);
    const registered = await request(first.url, 'POST', '/auth/register', {
      body: { email: 'kill@example.test', password: 'kill password 1234', organization_name: 'Kill Inc' },
    });
    expect(registered.status).toBe(201);
    const session = registered.body.token as string;
    const pipeline = await request(first.url, 'POST', '/context/pipelines', {
      token: session,
      body: { name: 'durable', kind: 'webhook', target_table: 'context_events' },
    });
    const token = await request(first.url, 'POST', `/context/pipelines/${pipeline.body.id}/tokens`, { token: session, body: {} });

    const acknowledged: number[] = [];
    const bodies: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const rows = Array.from({ length: 1000 }, (_, index) => ({ label: `b${batch}`, n: index, batch: String(batch) }));
      bodies.push(ndjson(rows));
      const response = await request(first.url, 'POST', `/context/ingest/webhook/${token.body.token}`, {
        body: bodies[batch],
        headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': `batch-${batch}` },
      });
      expect(response.status).toBe(200);
      acknowledged.push(response.body.run_id as number);
    }

    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await startServerProcess(env);
    running.push(second);
    const tables = await request(second.url, 'GET', '/context/tables', { token: session });
    expect(tables.status).toBe(200);
    expect(tables.body.items.map((item: { name: string; row_count: number }) => [item.name, item.row_count])).toEqual([['context_events', 5000]]);
    const runs = await request(second.url, 'GET', `/context/pipelines/${pipeline.body.id}/runs`, { token: session });
    expect(runs.body.items.map((run: { run_id: number }) => run.run_id)).toEqual([...acknowledged].reverse());

    // a client that never saw the answer retries: the committed result comes back, nothing is written twice
    const retry = await request(second.url, 'POST', `/context/ingest/webhook/${token.body.token}`, {
      body: bodies[4],
      headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': 'batch-4' },
    });
    expectStatus(retry, 200).toEqual({ rows_in: 1000, rows_out: 1000, run_id: acknowledged[4] });
    const again = await request(second.url, 'GET', '/context/tables', { token: session });
    expect(again.body.items[0].row_count).toBe(5000);

    // run ids keep increasing after the restart
    const after = await request(second.url, 'POST', `/context/ingest/webhook/${token.body.token}`, {
      body: ndjson([{ label: 'after restart' }]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(after.status).toBe(200);
    expect(after.body.run_id).toBeGreaterThan(Math.max(...acknowledged));
  }, 120_000); // two real server starts on a busy 2-core machine
});
