/** `graph import`: the real client binary streams a file to the real server's POST /graph/import. */
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
  ({ server, owner } = await oneOrg({}, { name: 'CLI Import Org' }));
  expect((await server.request('POST', '/realms', { token: owner.token, body: { name: 'loads' } })).status).toBe(201);
  env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: owner.token };
  work = mkdtempSync(join(tmpdir(), 'cli-graph-import-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('graph import', () => {
  it('streams NDJSON, then CSV by extension; a second create is refused, --mode merge upserts', async () => {
    const ndjson = join(work, 'graph.ndjson');
    const rows = [
      ...Array.from({ length: 3000 }, (_, i) => ({ label: 'Svc', _key: `s${i}`, name: `service ${i}`, tier: i % 3 })),
      ...Array.from({ length: 2999 }, (_, i) => ({ type: 'CALLS', _from: `Svc:s${i}`, _to: `Svc:s${i + 1}` })),
    ];
    writeFileSync(ndjson, rows.map((row) => JSON.stringify(row)).join('\n'));
    const loaded = await runCli(['graph', 'import', '--file', ndjson, '--realm', 'loads', '--json'], { env });
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toEqual({ realm: 'loads', mode: 'create', nodes: 3000, relationships: 2999, method: 'copy' });

    const csv = join(work, 'teams.csv');
    writeFileSync(csv, 'label,_key,size:int\nTeam,core,5\nTeam,edge,2\n');
    const teams = await runCli(['graph', 'import', '--file', csv, '--realm', 'loads'], { env });
    expect(teams.code, teams.stderr).toBe(0);
    expect(teams.stdout).toContain('imported 2 nodes and 0 relationships into realm loads (create, copy)');

    const again = await runCli(['graph', 'import', '--file', csv, '--realm', 'loads'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('409 conflict');
    writeFileSync(csv, 'label,_key,size:int\nTeam,core,7\n');
    const merged = await runCli(['graph', 'import', '--file', csv, '--realm', 'loads', '--mode', 'merge', '--json'], { env });
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout)).toMatchObject({ nodes: 1, method: 'upsert' });
    const stats = await runCli(['graph', 'stats', '--labels', '--realm', 'loads', '--json'], { env });
    expect(JSON.parse(stats.stdout)).toMatchObject({ node_count: 3002, relationship_count: 2999, labels: { Svc: 3000, Team: 2 } });
  }, 120_000);

  it('names a bad line (exit 1), a missing file and a bad --format (usage)', async () => {
    const bad = join(work, 'bad.jsonl');
    writeFileSync(bad, '{"label":"A","_key":"a"}\n{"label":"A"}\n');
    const refused = await runCli(['graph', 'import', '--file', bad, '--realm', 'loads'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 validation_error: line 2');
    const missing = await runCli(['graph', 'import', '--file', join(work, 'nope.csv')], { env });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('is not a file');
    const format = await runCli(['graph', 'import', '--file', bad, '--format', 'xml'], { env });
    expect(format.stderr).toContain('--format must be one of ndjson|csv');
  });
});
