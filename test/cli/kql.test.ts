/** `kql` of the real client binary against the real server's POST /context/kql. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { TestServer } from '../helpers/server.js';
import { runCli } from './run-cli.js';

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  const started = await oneOrg({}, { name: 'CLI KQL Org' });
  server = started.server;
  env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: started.owner.token };
  const settings = await server.request('PATCH', '/settings', { token: started.owner.token, body: { context_tier: 'advanced' } });
  expect(settings.status).toBe(200);
});
afterAll(async () => server.stop());

describe('kql command', () => {
  it('prints a table, or the JSON answer with --json', async () => {
    const query = 'datatable(name:string, n:long)["a", 1, "b", 2] | sort by n asc';
    const tableRun = await runCli(['kql', query, '--realm', 'default'], { env });
    expect(tableRun.code, tableRun.stderr).toBe(0);
    expect(tableRun.stdout.trim().split('\n')).toEqual(['name  n', 'a     1', 'b     2', '(2 rows)']);
    const jsonRun = await runCli(['kql', query, '--json'], { env });
    expect(jsonRun.code, jsonRun.stderr).toBe(0);
    const answer = JSON.parse(jsonRun.stdout);
    expect(answer.rows).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  it('reports a KQL error with a non-zero exit', async () => {
    const result = await runCli(['kql', 'print x = nosuchname'], { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('kql_error');
  });
});
