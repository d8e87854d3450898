/** `graph ...` commands of the real client binary against the real server's /graph routes. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { runCli } from './run-cli.js';

let server: TestServer;
let owner: Session;
let env: Record<string, string>;
let work: string;

beforeAll(async () => {
  ({ server, owner } = await oneOrg({}, { name: 'CLI Graph Org' }));
  const pipeline = await server.request('POST', '/pipelines', { token: owner.token, body: { name: 'graph-loader' } });
  const started = await server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: owner.token, body: {} });
  env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: started.body.token as string };
  work = mkdtempSync(join(tmpdir(), 'cli-graph-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

const json = (stdout: string) => JSON.parse(stdout);

describe('graph commands with a pipeline-scoped token', () => {
  it('write-nodes --file sends a large array in batches with one progress line per batch', async () => {
    const nodes = Array.from({ length: 2500 }, (_, index) => ({ label: 'File', key: `f${index}`, properties: { name: `file ${index}`, size: index } }));
    const file = join(work, 'nodes.json');
    writeFileSync(file, JSON.stringify(nodes));
    const result = await runCli(['graph', 'write-nodes', '--file', file, '--batch-size', '1000', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toEqual({ realm: 'default', upserted: 2500, batches: 3 });
    expect(result.stderr.split('\n').filter((line) => line.startsWith('graph write-nodes '))).toEqual([
      'graph write-nodes 1000/2500 nodes: batch 1/3',
      'graph write-nodes 2000/2500 nodes: batch 2/3',
      'graph write-nodes 2500/2500 nodes: batch 3/3',
    ]);
    const stats = await runCli(['graph', 'stats', '--labels', '--json'], { env });
    expect(json(stats.stdout)).toMatchObject({ node_count: 2500, labels: { File: 2500 } });
    // more than one request may carry is refused before anything is sent
    const tooBig = await runCli(['graph', 'write-nodes', '--file', file, '--batch-size', '20000'], { env });
    expect(tooBig.code).not.toBe(0);
    expect(tooBig.stderr).toContain('--batch-size must be an integer from 1 to 10000, got "20000"');
  }, 120_000);

  it('add-node parses --prop values (boolean, integer, float, string) and get shows them', async () => {
    const added = await runCli(
      [
        'graph',
        'add-node',
        '--label',
        'Service',
        '--key',
        'checkout',
        '--prop',
        'tier=1',
        '--prop',
        'critical=true',
        '--prop',
        'ratio=0.5',
        '--prop',
        'owner=team-a',
        '--prop',
        'name=checkout service',
      ],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('upserted Service:checkout');
    const got = await runCli(['graph', 'get', '--id', 'Service:checkout', '-j'], { env });
    expect(json(got.stdout)).toMatchObject({
      id: 'Service:checkout',
      label: 'Service',
      key: 'checkout',
      properties: { _key: 'checkout', tier: 1, critical: true, ratio: 0.5, owner: 'team-a' },
    });
  });

  it('write-rels from stdin and add-rel connect nodes; cypher answers a 2-hop question; stats counts them', async () => {
    await runCli(
      [
        'graph',
        'write-nodes',
        '--data',
        JSON.stringify([
          { label: 'Service', key: 'payments', properties: { name: 'payments' } },
          { label: 'Database', _key: 'pg-main', name: 'postgres main' },
        ]),
      ],
      { env },
    );
    const rels = await runCli(['graph', 'write-rels', '--stdin'], {
      env,
      stdin: JSON.stringify([{ type: 'CALLS', from: 'Service:checkout', to: 'Service:payments', properties: { via: 'http' } }]),
    });
    expect(rels.code, rels.stderr).toBe(0);
    expect(rels.stdout).toContain('upserted 1 relationships');
    const rel = await runCli(['graph', 'add-rel', '--type', 'USES', '--from', 'Service:payments', '--to', 'Database:pg-main', '--prop', 'pool=10'], { env });
    expect(rel.code, rel.stderr).toBe(0);

    const cypher = await runCli(
      [
        '--json',
        'graph',
        'cypher',
        'MATCH (a:Service {_key: $key})-[:CALLS]->(:Service)-[:USES]->(d:Database) RETURN d._key AS db',
        '--params',
        '{"key":"checkout"}',
      ],
      { env },
    );
    expect(cypher.code, cypher.stderr).toBe(0);
    expect(json(cypher.stdout)).toEqual({ columns: ['db'], rows: [{ db: 'pg-main' }] });
    const table = await runCli(['graph', 'cypher', 'MATCH (d:Database) RETURN d._key AS db'], { env });
    expect(table.stdout).toContain('pg-main');
    expect(table.stdout).toContain('(1 rows)');

    const stats = await runCli(['graph', 'stats', '--labels', '--json'], { env });
    expect(json(stats.stdout)).toMatchObject({ relationship_count: 2, labels: { Service: 2, Database: 1 } });
  });

  it('search ranks matches and filters by --label', async () => {
    const result = await runCli(['graph', 'search', '--query', 'postgres', '--label', 'Database', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout).items.map((item: { id: string }) => item.id)).toEqual(['Database:pg-main']);
    const limited = await runCli(['graph', 'search', '--query', 'file', '--limit', '3', '--json'], { env });
    expect(json(limited.stdout).items).toHaveLength(3);
  });

  it('delete removes the node with its relationships; a later get exits 10', async () => {
    const deleted = await runCli(['graph', 'delete', '--id', 'Service:payments', '--json'], { env });
    expect(json(deleted.stdout)).toEqual({ id: 'Service:payments', deleted: true, relationships_deleted: 2 });
    const missing = await runCli(['graph', 'get', '--id', 'Service:payments'], { env });
    expect(missing.code).toBe(10);
  });

  it('a server-side validation error is exit 1 with the server message', async () => {
    const result = await runCli(['graph', 'write-nodes', '--data', '[{"label":"bad-label","key":"x"}]'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('400 validation_error');
  });
});
