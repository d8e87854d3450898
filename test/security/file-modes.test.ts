/**
 * Everything under DATA_DIR is the owner's alone after a start and a few
 * writes (metadata store, ingest, graph, file store): no file readable and no
 * folder accessible by group or others. Engine files an earlier release left
 * open to others are tightened when opened.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';

/** every path under `root` (itself included) whose mode lets group or others in, with its mode */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const path = pending.pop() as string;
    const stats = statSync(path);
    if ((stats.mode & 0o077) !== 0) found.push(`${path} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name));
  }
  return found;
}

/** how many files and folders are under `root` */
const countEntries = (root: string): number => readdirSync(root, { recursive: true }).length;

describe('file modes under DATA_DIR', () => {
  const parent = mkdtempSync(join(tmpdir(), 'svc-modes-test-'));
  // a DATA_DIR that does not exist yet: the service creates it and everything in it
  const dataDir = join(parent, 'nested', 'data');
  let server: TestServer;

  afterAll(async () => {
    await server.stop();
    rmSync(parent, { recursive: true, force: true });
  });

  const env = { JWT_SECRET: 'x'.repeat(40) };

  it('after a start, an upload, an ingest and a graph write: nothing is open to group or others', async () => {
    server = await startTestServer(env, { dataDir });
    const owner = await server.register();
    const upload = await server.request('PUT', `/files/content?path=${encodeURIComponent('reports/deep/a.txt')}`, {
      token: owner.token,
      body: Buffer.from('hello'),
    });
    expect(upload.status).toBeLessThan(300);
    const pipeline = await createPipeline(server, owner);
    expect((await ingest(server, pipeline.token, ndjson([{ label: 'a' }, { label: 'b' }]))).status).toBe(200);
    const graph = await server.request('POST', '/graph/nodes', {
      token: owner.token,
      body: { nodes: [{ label: 'Service', properties: { _key: 'payments', name: 'Payments' } }] },
    });
    expect(graph.status).toBe(200);
    expect(countEntries(dataDir)).toBeGreaterThan(5);
    expect(openToOthers(dataDir)).toEqual([]);
  });

  it('database files left 0644 by an earlier release are 0600 again after a restart', async () => {
    await server.stop();
    for (const name of ['metadata.db', 'context.duckdb']) chmodSync(join(dataDir, name), 0o644);
    expect(openToOthers(dataDir)).toHaveLength(2);
    server = await startTestServer(env, { dataDir });
    const owner = await server.register();
    expect((await createPipeline(server, owner)).token).toMatch(/^ctx_/);
    expect(openToOthers(dataDir)).toEqual([]);
  });
});
