/**
 * POST /context/kql against the real server and DuckDB: the Advanced tier
 * gate, parser errors with line and column, KQL over ingested rows (JSON and
 * Arrow), realm and organization isolation, and a query trying to reach past
 * its realm's tables.
 */
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { useTwoOrgs, useSuite } from '../helpers/suite.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';
import type { Session, TestServer } from '../helpers/server.js';

const kql = (server: TestServer, session: Session, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.request('POST', '/context/kql', { token: session.token, body, headers });

describe('POST /context/kql', () => {
  const ctx = useTwoOrgs();
  const data = useSuite(async () => {
    const { server, alice, bob } = ctx;
    for (const session of [alice, bob]) {
      const settings = await server.request('PATCH', '/settings', { token: session.token, body: { context_tier: 'advanced' } });
      expect(settings.status).toBe(200);
      expect(settings.body.context_tier).toBe('advanced');
    }
    expect((await server.request('POST', '/realms', { token: alice.token, body: { name: 'ops' } })).status).toBe(201);
    const pipeline = await createPipeline(server, alice, { realm: 'ops' });
    const rows = [
      { at: '2025-01-01T00:10:00Z', label: 'deploy', body: 'api v2 rolled out', service: 'api', tags: ['a', 'b'] },
      { at: '2025-01-01T00:20:00Z', label: 'error', body: 'timeout calling db', service: 'api', tags: ['c'] },
      { at: '2025-01-01T01:05:00Z', label: 'error', body: 'disk full', service: 'web', tags: [] },
      { at: '2025-01-01T01:30:00Z', label: 'deploy', body: 'web rollout', service: 'web', tags: ['a'] },
    ];
    expect((await ingest(server, pipeline.token, ndjson(rows))).status).toBe(200);
    const secret = await createPipeline(server, bob, { realm: 'default' });
    expect((await ingest(server, secret.token, ndjson([{ label: 'bob-secret', body: 'only bob' }]))).status).toBe(200);
    return {};
  }, 60_000);

  it('is the Advanced tier: basic organizations get 403 advanced_tier_required', async () => {
    void data;
    const { server } = ctx;
    const carol = await server.register('Carol Co');
    const settings = await server.request('GET', '/settings', { token: carol.token });
    expect(settings.body.context_tier).toBe('basic');
    const refused = await kql(server, carol, { query: 'print x = 1', realm: 'default' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('advanced_tier_required');
  });

  it('runs where, summarize with bin and count over ingested rows', async () => {
    const { server, alice } = ctx;
    const response = await kql(server, alice, {
      realm: 'ops',
      query: 'context_events | where label == "error" or body has "rollout" | summarize count() by bin(at, 1h), service | sort by at asc, service asc',
    });
    expect(response.status).toBe(200);
    expect(response.body.columns).toEqual([
      { name: 'at', type: 'datetime' },
      { name: 'service', type: 'string' },
      { name: 'count_', type: 'long' },
    ]);
    expect(response.body.rows).toEqual([
      ['2025-01-01T00:00:00.0000000Z', 'api', 1],
      ['2025-01-01T01:00:00.0000000Z', 'web', 2],
    ]);
    expect(response.body.stats).toMatchObject({ row_count: 2, truncated: false, chart: null });
  });

  it('keeps Kusto semantics: has is term matching, integer division, default sort descending', async () => {
    const { server, alice } = ctx;
    const response = await kql(server, alice, {
      realm: 'ops',
      query:
        'print a = "api v2 rolled" has "v2", b = "api v2 rolled" has "v", c = 7 / 2, d = 7.0 / 2 | extend e = 1 | union (print a = false, b = false, c = 9, d = 0.0, e = 2) | sort by e',
    });
    expect(response.status).toBe(200);
    expect(response.body.rows).toEqual([
      [false, false, 9, 0, 2],
      [true, false, 3, 3.5, 1],
    ]);
  });

  it('expands arrays, joins, reads props and reports render as stats.chart', async () => {
    const { server, alice } = ctx;
    const expanded = await kql(server, alice, {
      realm: 'ops',
      query:
        'context_events | extend t = parse_json(tags) | mv-expand tag = t to typeof(string) | summarize n = count() by tag | sort by tag asc | render columnchart',
    });
    expect(expanded.status).toBe(200);
    // Kusto strings are never null: the row without tags groups under ''
    expect(expanded.body.rows).toEqual([
      ['', 1],
      ['a', 2],
      ['b', 1],
      ['c', 1],
    ]);
    expect(expanded.body.stats.chart).toBe('columnchart');
    const joined = await kql(server, alice, {
      realm: 'ops',
      query:
        'context_events | summarize errors = countif(label == "error") by service | join kind=inner (datatable(service:string, team:string)["api","core","web","edge"]) on service | project service, team, errors | sort by service asc',
    });
    expect(joined.status).toBe(200);
    expect(joined.body.rows).toEqual([
      ['api', 'core', 1],
      ['web', 'edge', 1],
    ]);
  });

  it('runs window functions, make-series and Kusto null strings over POST /context/kql', async () => {
    const { server, alice } = ctx;
    const windowed = await kql(server, alice, {
      realm: 'ops',
      query:
        'datatable(g:string, v:long)[ "a",1, "a",2, "b",5 ] | sort by g asc, v asc | serialize rn = row_number(1, g != prev(g)), cs = row_cumsum(v), p = prev(v)',
    });
    expect(windowed.status).toBe(200);
    expect(windowed.body.rows).toEqual([
      ['a', 1, 1, 1, null],
      ['a', 2, 2, 3, 1],
      ['b', 5, 1, 8, 2],
    ]);
    const series = await kql(server, alice, {
      realm: 'ops',
      query: 'datatable(t:long, v:long)[ 0,1, 4,5 ] | make-series s = sum(v) default = 0 on t from 0 to 6 step 2',
    });
    expect(series.status).toBe(200);
    expect(series.body.rows).toEqual([
      [
        [1, 0, 5],
        [0, 2, 4],
      ],
    ]);
    const outer = await kql(server, alice, {
      realm: 'ops',
      query:
        'datatable(k:long, lv:string)[ 1,"a" ] | join kind=leftouter (datatable(k:long, rv:string)[ 2,"x" ]) on k | extend n = tostring(dynamic(null)), m = -5 % 3',
    });
    expect(outer.status).toBe(200);
    expect(outer.body.rows).toEqual([[1, 'a', null, '', '', 1]]);
  });

  it('answers Arrow IPC when asked', async () => {
    const { server, alice } = ctx;
    const response = await fetch(`${server.url}/context/kql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, accept: 'application/vnd.apache.arrow.stream', 'content-type': 'application/json' },
      body: JSON.stringify({ realm: 'ops', query: 'context_events | project at, label | take 2' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect(response.headers.get('x-row-count')).toBe('2');
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(table.numRows).toBe(2);
    expect(table.schema.fields.map((field) => field.name)).toEqual(['at', 'label']);
  });

  it('reports parser errors as 400 kql_error with line and column', async () => {
    const { server, alice } = ctx;
    const syntax = await kql(server, alice, { realm: 'ops', query: 'context_events\n| where label == ' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe('kql_error');
    expect(syntax.body.error.details.line).toBe(2);
    const semantic = await kql(server, alice, { realm: 'ops', query: 'context_events | where nosuchcolumn > 1' });
    expect(semantic.status).toBe(400);
    expect(semantic.body.error.code).toBe('kql_error');
    expect(semantic.body.error.message).toContain('nosuchcolumn');
    expect(semantic.body.error.details).toMatchObject({ line: 1, column: 24 });
  });

  it("cannot reach another realm's or organization's tables, nor DuckDB functions", async () => {
    const { server, alice, bob } = ctx;
    // alice's default realm has no ingested rows: the ops rows are not visible from there
    const other = await kql(server, alice, { realm: 'default', query: 'context_events | count' });
    expect(other.status).toBe(200);
    expect(other.body.rows).toEqual([[0]]);
    // bob cannot name alice's realm
    const foreign = await kql(server, bob, { realm: 'ops', query: 'context_events | count' });
    expect(foreign.status).toBe(404);
    // an attacker's tries: DuckDB table functions, schema-qualified names, quoted identifiers
    for (const query of [
      'read_csv("/etc/passwd")',
      `print x = read_csv('/etc/passwd')`,
      `database("x").context_events`,
      `["${bob.organization.id}:default"].context_events`,
      `context_events | where label == "x\\"; DROP TABLE context_events; --"`,
      `print x = strcat("a", "'); SELECT 1; --")`,
    ]) {
      const response = await kql(server, alice, { realm: 'default', query });
      if (response.status === 200) {
        expect(JSON.stringify(response.body.rows)).not.toContain('only bob');
        continue;
      }
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('kql_error');
    }
    const still = await kql(server, bob, { realm: 'default', query: 'context_events | project body' });
    expect(still.body.rows).toEqual([['only bob']]);
  });

  it('sees the table and the columns ingest adds after a query (the realm table list is kept only until then)', async () => {
    const { server, alice } = ctx;
    expect((await server.request('POST', '/realms', { token: alice.token, body: { name: 'growing' } })).status).toBe(201);
    const empty = await kql(server, alice, { realm: 'growing', query: 'context_events | count' });
    expect(empty.body.rows).toEqual([[0]]);
    const unknown = await kql(server, alice, { realm: 'growing', query: 'context_events | project region' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('kql_error');
    const pipeline = await createPipeline(server, alice, { realm: 'growing' });
    expect((await ingest(server, pipeline.token, ndjson([{ at: '2025-01-01T00:00:00Z', label: 'first', body: 'a' }]))).status).toBe(200);
    const created = await kql(server, alice, { realm: 'growing', query: 'context_events | project label' });
    expect(created.body.rows).toEqual([['first']]);
    expect((await ingest(server, pipeline.token, ndjson([{ at: '2025-01-01T00:01:00Z', label: 'second', body: 'b', region: 'eu' }]))).status).toBe(200);
    const grown = await kql(server, alice, { realm: 'growing', query: 'context_events | project label, region | sort by label asc' });
    expect(grown.status).toBe(200);
    expect(grown.body.rows).toEqual([
      ['first', ''],
      ['second', 'eu'],
    ]);
  });

  it('bounds the body and enforces timeout_ms', async () => {
    const { server, alice } = ctx;
    const tooBig = await kql(server, alice, { realm: 'ops', query: 'print x = 1', limit: 0 });
    expect(tooBig.status).toBe(400);
    const slow = await kql(server, alice, {
      realm: 'ops',
      query: 'range x from 1 to 3000000000 step 1 | summarize dcount(x % 1000003), sum(x)',
      timeout_ms: 200,
    });
    expect(slow.status).toBe(422);
    expect(slow.body.error.code).toBe('query_timeout');
  });
});
