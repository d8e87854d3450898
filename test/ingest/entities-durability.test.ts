import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { request } from '../helpers/server.js';
import { expectStatus } from '../helpers/expect-status.js';
import { ndjson } from './helpers.js';

describe('entity ingests: kill -9 loses neither the table nor the graph', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctx-entities-kill-'));
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

  const kill = async (server: ServerProcess): Promise<void> => {
    server.child.kill('SIGKILL');
    await server.exited;
    expect(server.child.signalCode).toBe('SIGKILL');
  };

  it('keeps every acknowledged batch in both, and replays a batch the graph had not taken before the crash', async () => {
    const first = await startServerProcess(env, 180_000);
    running.push(first);
    const registered = await request(first.url, 'POST', '/auth/register', {
      body: { email: 'entities@example.test', password: 'entities password 1234', organization_name: 'Entities Inc' },
    });
    const session = registered.body.token as string;
    const orgId = registered.body.organization.id as string;
    await request(first.url, 'POST', '/realms', { token: session, body: { name: 'staging' } });
    const pipelineIn = async (realm: string): Promise<string> => {
      const pipeline = await request(first.url, 'POST', '/context/pipelines', {
        token: session,
        body: { name: `nodes-${realm}`, target_table: 'context_nodes', realm },
      });
      const token = await request(first.url, 'POST', `/context/pipelines/${pipeline.body.id}/tokens`, { token: session, body: {} });
      return token.body.token as string;
    };
    const send = (url: string, token: string, body: string, key: string) =>
      request(url, 'POST', `/context/ingest/webhook/${token}`, { body, headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': key } });

    const token = await pipelineIn('default');
    for (let batch = 0; batch < 4; batch++) {
      const rows = Array.from({ length: 250 }, (_, index) => ({ label: 'Device', _key: `d${batch}-${index}`, batch, index }));
      const response = await send(first.url, token, ndjson(rows), `devices-${batch}`);
      expectStatus(response, 200).toMatchObject({ rows_out: 250, graph: { nodes: 250, rejected: 0 } });
    }

    // the staging realm's graph cannot open (a folder stands where its database file goes): the rows commit, the graph owes them
    mkdirSync(join(dataDir, 'graph', orgId, 'staging.kuzu'), { recursive: true });
    writeFileSync(join(dataDir, 'graph', orgId, 'staging.kuzu', 'in-the-way'), 'x');
    const stagingToken = await pipelineIn('staging');
    const owed = ndjson([{ label: 'Device', _key: 'late', batch: 9 }]);
    const refused = await send(first.url, stagingToken, owed, 'late-1');
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'service_unavailable', details: { graph: 'pending' } });

    await kill(first);
    rmSync(join(dataDir, 'graph', orgId, 'staging.kuzu'), { recursive: true, force: true });

    const second = await startServerProcess(env, 180_000);
    running.push(second);
    const tables = await request(second.url, 'GET', '/context/tables?realm=default', { token: session });
    expect(tables.body.items.map((item: { name: string; row_count: number }) => [item.name, item.row_count])).toEqual([['context_nodes', 1000]]);
    const stats = await request(second.url, 'GET', '/graph/stats?realm=default&labels=true', { token: session });
    expect(stats.body).toMatchObject({ node_count: 1000, labels: { Device: 1000 } });
    // replayed at start
    const late = await request(second.url, 'GET', `/graph/nodes/${encodeURIComponent('Device:late')}?realm=staging`, { token: session });
    expectStatus(late, 200).toMatchObject({ properties: { batch: 9 } });
    // the client's retry is answered from the committed run, with what the graph took
    const retry = await send(second.url, stagingToken, owed, 'late-1');
    expectStatus(retry, 200).toMatchObject({ rows_out: 1, graph: { status: 'done', nodes: 1 } });
    const stagingRows = await request(second.url, 'GET', '/context/tables?realm=staging', { token: session });
    expect(stagingRows.body.items[0].row_count).toBe(1);
  }, 480_000); // real server starts on a busy 2-core machine
});
