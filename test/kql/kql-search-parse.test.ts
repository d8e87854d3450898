/**
 * POST /context/kql with search, `where *`, parse-kv, parse kind=regex,
 * toscalar, as and partition, against the real server and DuckDB (issue 20),
 * and the error envelope for forms the translation refuses.
 */
import { describe, expect, it } from 'vitest';
import { useOneOrg, useSuite } from '../helpers/suite.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';

describe('KQL search, parse-kv, toscalar, as, partition', () => {
  const ctx = useOneOrg();
  const kql = async (query: string) => ctx.server.request('POST', '/context/kql', { token: ctx.owner.token, body: { realm: 'default', query } });
  const rows = async (query: string): Promise<unknown[][]> => {
    const response = await kql(query);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.rows as unknown[][];
  };
  useSuite(async () => {
    const { server, owner } = ctx;
    expect((await server.request('PATCH', '/settings', { token: owner.token, body: { context_tier: 'advanced' } })).status).toBe(200);
    const pipeline = await createPipeline(server, owner, { realm: 'default' });
    const events = [
      { at: '2025-01-01T00:10:00Z', label: 'error', body: 'Timeout calling db', service: 'api', kv: 'user=alice;role=admin;ttl=30' },
      { at: '2025-01-01T00:20:00Z', label: 'deploy', body: 'web rollout', service: 'web', kv: "user='bob smith';ttl=60" },
      { at: '2025-01-01T00:30:00Z', label: 'info', body: 'all quiet', service: 'db', kv: 'role=reader' },
    ];
    expect((await ingest(server, pipeline.token, ndjson(events))).status).toBe(200);
    return {};
  }, 60_000);

  it('search: terms in any column, Column:term, wildcards, case sensitivity and $table', async () => {
    expect(await rows('context_events | search "timeout" or service:"web" | project label | sort by label asc')).toEqual([['deploy'], ['error']]);
    // has is term matching: "time" is not a term of "Timeout"; time* is a term prefix
    expect(await rows('context_events | search "time" | count')).toEqual([[0]]);
    expect(await rows('context_events | search "time*" | project label')).toEqual([['error']]);
    expect(await rows('context_events | search kind=case_sensitive "timeout" | count')).toEqual([[0]]);
    expect(await rows('context_events | search "w*o*t" and not(label == "error") | project label')).toEqual([['deploy']]);
    const named = await kql('context_events | search "quiet"');
    expect(named.body.columns[0]).toEqual({ name: '$table', type: 'string' });
    expect(named.body.rows.map((row: unknown[]) => row[0])).toEqual(['context_events']);
    // not("term"): the engine takes a bare term there, the analyzer wants a bool (its diagnostic is dropped only inside search)
    expect(await rows('context_events | search not("web") and not("timeout") | project label')).toEqual([['info']]);
    expect((await kql('context_events | where not("web")')).status).toBe(400);
    // non-string columns are searched as their text
    expect(await rows('datatable(n:long, s:string)[ 100,"a", 7,"b" ] | search "100" | project s')).toEqual([['a']]);
  });

  it('where * applies a string operator to every column', async () => {
    const table = 'datatable(s:string, n:int)[ "needle in haystack",1, "another row",2 ]';
    expect(await rows(`${table} | where * contains "needle" or * !contains "row" | project n`)).toEqual([[1]]);
    expect(await rows(`${table} | where * has "2" | project s`)).toEqual([['another row']]);
  });

  it('parse-kv: delimiters, quotes, first occurrence, types and regex mode', async () => {
    expect(
      await rows(
        'context_events | parse-kv kv as (user:string, ttl:long) with (pair_delimiter=";", kv_delimiter="=", quote="\'") | project user, ttl | sort by user asc',
      ),
    ).toEqual([
      ['', null],
      ['alice', 30],
      ['bob smith', 60],
    ]);
    expect(
      await rows('print s = " a = 1 ; b = x=y ; a = 2 " | parse-kv s as (a:int, b:string) with (pair_delimiter=";", kv_delimiter="=") | project a, b'),
    ).toEqual([[1, 'x=y']]);
    expect(await rows('print s = "k1:v1, k2:v2" | parse-kv s as (k2:string) with (regex=@"(\\w+):(\\w+)") | project k2')).toEqual([['v2']]);
  });

  it('parse kind=regex: literals are regular expressions, string columns take what the rest allows', async () => {
    expect(await rows('print s = "abc123def" | parse kind=regex s with letters:string @"\\d+" rest:string | project letters, rest')).toEqual([
      ['abc12', 'def'],
    ]);
    expect(await rows('print s = "v1.22.3" | parse kind=regex s with "v" major:int "[.]" minor:int | project major, minor')).toEqual([[1, 22]]);
  });

  it('toscalar, as and partition', async () => {
    expect(
      await rows(
        'let total = toscalar(context_events | count); context_events | summarize n = count() by service | extend share = 100 * n / total | sort by service asc',
      ),
    ).toEqual([
      ['api', 1, 33],
      ['db', 1, 33],
      ['web', 1, 33],
    ]);
    expect(await rows('print t = toscalar(datatable(x:long)[ 1, 2, 3 ] | summarize sum(x)), none = toscalar(datatable(x:long)[] | project x)')).toEqual([
      [6, null],
    ]);
    expect(
      await rows(
        'datatable(k:long, v:long)[ 1,10, 1,20, 2,30 ] | as T | summarize s = sum(v) by k | join kind=inner (T | summarize c = count() by k) on k | project k, s, c | sort by k asc',
      ),
    ).toEqual([
      [1, 30, 2],
      [2, 30, 1],
    ]);
    expect(await rows('datatable(k:long, v:long)[ 1,10, 1,20, 2,30, 2,5 ] | partition by k (top 1 by v) | sort by k asc')).toEqual([
      [1, 20],
      [2, 30],
    ]);
    expect(await rows('range i from 1 to 6 step 1 | extend g = i % 2 | partition by g (summarize s = sum(i)) | sort by s asc')).toEqual([[9], [12]]);
  });

  it('refuses forms it does not translate with the kql_error envelope', async () => {
    for (const query of [
      'print s = "a=1" | parse-kv s as (a:long) with (pair_delimiter=";")',
      'print s = "a=1" | parse-kv s as (a:long) with (pair_delimiter=";;", kv_delimiter="=", greedy=true)',
      'datatable(k:long)[1] | partition by k { range x from 1 to 2 step 1 }',
      'search in (context_events) "x"',
    ]) {
      const response = await kql(query);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code, query).toBe('kql_error');
      expect(typeof response.body.error.message).toBe('string');
    }
  });
});
