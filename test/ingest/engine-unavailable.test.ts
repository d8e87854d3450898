import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { createPipeline, ingest, ndjson, type PipelineWithToken } from './helpers.js';
import { expectError } from '../helpers/expect-status.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Another process that holds the DuckDB file (and so its lock) until killed. */
function holdLock(file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/ingest/hold-duckdb-lock.ts', file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'locked') resolve(child);
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('503 engine_unavailable when DuckDB refuses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctx-lock-'));
  const dbFile = join(dir, 'context.duckdb');
  let holder: ChildProcess;
  let server: TestServer;
  let alice: Session;
  let pipeline: PipelineWithToken;

  beforeAll(async () => {
    holder = await holdLock(dbFile);
    ({ server, owner: alice } = await oneOrg({ CONTEXT_DB_PATH: dbFile }));
    pipeline = await createPipeline(server, alice);
  });
  afterAll(async () => {
    await kill(holder);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts anyway, reports the engine down, and refuses ingest and reads with 503', async () => {
    const health = await server.request('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body.dependencies.context_tables).toBe('down');
    expect(health.body.status).toBe('degraded');

    const refused = await ingest(server, pipeline.token, ndjson([{ label: 'waiting' }]));
    expectError(refused, 503, 'engine_unavailable');
    expect(String(refused.body.error.details.reason)).toContain('lock');

    const tables = await server.request('GET', '/context/tables', { token: alice.token });
    expectError(tables, 503, 'engine_unavailable');
    const runs = await server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs`, { token: alice.token });
    expect(runs.status).toBe(503);
    // auth still comes first: a bad token is 401 whatever the engine's state
    expect((await ingest(server, 'ctx_' + 'Z'.repeat(32), ndjson([{ a: 1 }]))).status).toBe(401);
  });

  it('comes back by itself once the other process lets go of the file', async () => {
    await kill(holder);
    const response = await ingest(server, pipeline.token, ndjson([{ label: 'after recovery' }]));
    expect(response.status).toBe(200);
    expect(response.body.rows_out).toBe(1);
    const health = await server.request('GET', '/health');
    expect(health.body.dependencies.context_tables).toBe('ok');
    const tables = await server.request('GET', '/context/tables', { token: alice.token });
    expect(tables.body.items.map((item: { name: string; row_count: number }) => [item.name, item.row_count])).toEqual([['context_events', 1]]);
  });
});
