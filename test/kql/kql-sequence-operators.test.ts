/**
 * POST /context/kql with the sequence and nesting operators (issue 20): scan,
 * top-nested, mv-apply and the series_* functions over ingested rows, through
 * the real server and DuckDB; constructs the translation cannot express are
 * refused with 400 kql_error naming them.
 */
import { describe, expect, it } from 'vitest';
import { useSuite, useTwoOrgs } from '../helpers/suite.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';

describe('POST /context/kql: scan, top-nested, mv-apply, series', () => {
  const ctx = useTwoOrgs();
  const data = useSuite(async () => {
    const { server, alice } = ctx;
    expect((await server.request('PATCH', '/settings', { token: alice.token, body: { context_tier: 'advanced' } })).status).toBe(200);
    const pipeline = await createPipeline(server, alice, { realm: 'default' });
    const rows = [
      { at: '2025-01-01T00:00:00Z', label: 'open', service: 'api', n: 5, tags: ['a', 'b'] },
      { at: '2025-01-01T01:00:00Z', label: 'run', service: 'api', n: 3, tags: ['c'] },
      { at: '2025-01-01T02:00:00Z', label: 'open', service: 'web', n: 8, tags: [] },
      { at: '2025-01-01T04:00:00Z', label: 'run', service: 'web', n: 1, tags: ['a', 'c', 'd'] },
    ];
    expect((await ingest(server, pipeline.token, ndjson(rows))).status).toBe(200);
    return {};
  }, 60_000);

  const kql = async (query: string) => {
    void data;
    return ctx.server.request('POST', '/context/kql', { token: ctx.alice.token, body: { realm: 'default', query } });
  };

  it('scan carries its step state from record to record; a bare declared name is the default', async () => {
    const response = await kql(
      'context_events | sort by at asc | scan with_match_id=m declare (total:long=0, fresh:long=100) with (step s: label != "x" => total = s.total + tolong(n), fresh = fresh + tolong(n);) | project label, total, fresh, m',
    );
    expect(response.status).toBe(200);
    expect(response.body.rows).toEqual([
      ['open', 5, 105, 0],
      ['run', 8, 103, 1],
      ['open', 16, 108, 2],
      ['run', 17, 101, 3],
    ]);
    const filtered = await kql(
      'context_events | sort by at asc | scan declare (opener:string) with (step s: label == "open" => opener = service;) | project opener',
    );
    expect(filtered.body.rows).toEqual([['api'], ['web']]);
    // 600 records: the state crosses the 256-record chunks the fold works in
    const long = await kql('range i from 1 to 600 step 1 | scan declare (c:long=0) with (step s: true => c = s.c + i;) | summarize max(c), count()');
    expect(long.body.rows).toEqual([[180300, 600]]);
  });

  it('top-nested keeps the best groups at each level', async () => {
    const response = await kql('context_events | top-nested 1 of service by total = sum(tolong(n)), top-nested of label by count() | sort by label asc');
    expect(response.status).toBe(200);
    expect(response.body.columns.map((column: { name: string }) => column.name)).toEqual(['service', 'total', 'label', 'aggregated_label']);
    expect(response.body.rows).toEqual([
      ['web', 9, 'open', 1],
      ['web', 9, 'run', 1],
    ]);
  });

  it('mv-apply runs its subquery per record', async () => {
    const response = await kql(
      'context_events | extend t = parse_json(tags) | where array_length(t) > 0 | mv-apply with_itemindex=i tag = t to typeof(string) on (where tag != "b" | summarize picked = make_list(tag), highest = max(i)) | project service, label, picked, highest | sort by label asc, service asc',
    );
    expect(response.status).toBe(200);
    expect(response.body.rows).toEqual([
      ['api', 'open', ['a'], 0],
      ['api', 'run', ['c'], 0],
      ['web', 'run', ['a', 'c', 'd'], 2],
    ]);
  });

  it('make-series with series_fill_forward, series_iir and range()', async () => {
    const response = await kql(
      'context_events | make-series v = sum(tolong(n)) default = long(null) on at from datetime(2025-01-01) to datetime(2025-01-01 05:00) step 1h | extend filled = series_fill_forward(v), cumulative = series_iir(series_fill_const(v, 0), dynamic([1]), dynamic([1, -1])), r = range(1, 3) | project v, filled, cumulative, r',
    );
    expect(response.status).toBe(200);
    expect(response.body.rows).toEqual([
      [
        [5, 3, 8, null, 1],
        [5, 3, 8, 8, 1],
        [5, 8, 16, 16, 17],
        [1, 2, 3],
      ],
    ]);
  });

  it('refuses what it cannot translate with kql_error naming the construct', async () => {
    const twoSteps = await kql('context_events | sort by at asc | scan with (step a: label == "open"; step b: label == "run";)');
    expect(twoSteps.status).toBe(400);
    expect(twoSteps.body.error.code).toBe('kql_error');
    expect(twoSteps.body.error.details).toMatchObject({ construct: 'ScanOperator', steps: 2 });
    const others = await kql('context_events | top-nested 1 of service with others = "rest" by count()');
    expect(others.status).toBe(400);
    expect(others.body.error.details).toMatchObject({ construct: 'TopNestedOperator' });
    const plugin = await kql('context_events | extend p = pack("a", 1) | evaluate bag_unpack(p)');
    expect(plugin.status).toBe(400);
    expect(plugin.body.error.details).toMatchObject({ construct: 'EvaluateOperator', plugin: 'bag_unpack' });
  });
});
