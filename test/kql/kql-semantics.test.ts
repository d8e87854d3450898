/**
 * Kusto semantics that plain SQL gets wrong, through POST /context/kql on the
 * real server: null and NaN comparisons, 64-bit int arithmetic, Kusto's
 * string parsing in casts, arg_max/arg_min columns and ties, expressions over
 * aggregates, list aggregates over arrays, and the set/array functions.
 */
import { describe, expect, it } from 'vitest';
import { useOneOrg, useSuite } from '../helpers/suite.js';

describe('POST /context/kql: Kusto semantics', () => {
  const ctx = useOneOrg();
  const ready = useSuite(async () => {
    const settings = await ctx.server.request('PATCH', '/settings', { token: ctx.owner.token, body: { context_tier: 'advanced' } });
    expect(settings.status).toBe(200);
    return {};
  }, 60_000);

  const rows = async (query: string): Promise<unknown[][]> => {
    void ready;
    const response = await ctx.server.request('POST', '/context/kql', { token: ctx.owner.token, body: { realm: 'default', query } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.rows as unknown[][];
  };

  it('compares nulls and NaN as Kusto does', async () => {
    // null != 1 holds, null == 1 does not, a null is in no list
    expect(
      await rows('datatable(x:long)[ 1, 2, long(null) ] | summarize ne = countif(x != 1), nt = countif(not(x == 1)), notin = countif(x !in (1, 2))'),
    ).toEqual([[2, 2, 1]]);
    expect(
      await rows('print eq = real(nan) == real(nan), ne = real(nan) != real(nan), gt = real(nan) > 1.0, inf = real(+inf) > 1e308, mn = min_of(real(nan), 1.0)'),
    ).toEqual([[false, true, false, true, 'NaN']]);
    expect(await rows('datatable(g:long)[ 1, 1, 2 ] | serialize changed = iff(g != prev(g), 1, 0)')).toEqual([
      [1, 1],
      [1, 0],
      [2, 1],
    ]);
  });

  it('computes int arithmetic in 64 bits and casts strings the Kusto way', async () => {
    expect(await rows('print a = int(2147483647) + int(1), b = toint(2147483648), c = (-5.5) % 3.0, d = 5.5 % (-3.0)')).toEqual([
      [2147483648, -2147483648, 0.5, 2.5],
    ]);
    expect(
      await rows('print a = tobool("-1"), b = tobool(" true"), c = toint("\\t456\\t"), d = todouble("INF"), e = totimespan("90s"), f = tostring(real(+inf))'),
    ).toEqual([[true, null, 456, null, '00:01:30', 'inf']]);
    expect(await rows('print s = sqrt(-1.0), l = log(-1.0), z = log(0.0), c = coalesce(tostring(int(null)), "fallback"), t = strcat("a", 1, true)')).toEqual([
      ['NaN', null, '-Infinity', 'fallback', 'a1True'],
    ]);
  });

  it('summarizes arg_max/arg_min by position with ties to the first row, and expressions over aggregates', async () => {
    expect(
      await rows(
        'datatable(k:long, v:long, w:long)[ 1,10,100, 1,10,50, 1,20,200, 2,30,300, 2,30,150 ] | summarize arg_max(v, w), arg_min(v, w) by k | sort by k asc',
      ),
    ).toEqual([
      [1, 20, 200, 10, 100],
      [2, 30, 300, 30, 300],
    ]);
    expect(await rows('datatable(k:long, v:long, t:string)[ 2,long(null),"c", 2,long(null),"d" ] | summarize arg_max(v, t) by k')).toEqual([[2, null, 'c']]);
    expect(
      await rows(
        'datatable(x:int)[ 1, 2, 3 ] | extend y = iif(x == 2, int(null), x) | summarize pct = 100.0 * countif(isnull(y)) / count(), span = max(x) - min(x)',
      ),
    ).toEqual([[100 / 3, 2]]);
  });

  it('lists arrays element by element and keeps nulls in make_list_with_nulls', async () => {
    expect(
      await rows(
        'datatable(g:string, v:dynamic)[ "p",dynamic([1,2]), "p",dynamic([3,4]) ] | summarize ml = make_list(v), ms = make_set(v) by g | project ml, ms',
      ),
    ).toEqual([
      [
        [1, 2, 3, 4],
        [1, 2, 3, 4],
      ],
    ]);
    expect(await rows('datatable(x:long)[ 1, 2, 3, 4 ] | summarize ln = make_list_with_nulls(iif(x % 2 == 0, x, long(null)))')).toEqual([[[null, 2, null, 4]]]);
  });

  it('runs the set and array functions', async () => {
    expect(
      await rows(
        'print a = dynamic([1,2,3]), b = dynamic([3,4]) | project u = set_union(a, b), i = set_intersect(a, b), d = set_difference(a, b), z = zip(a, b), j = jaccard_index(a, b)',
      ),
    ).toEqual([
      [
        [1, 2, 3, 4],
        [3],
        [1, 2],
        [
          [1, 3],
          [2, 4],
          [3, null],
        ],
        0.25,
      ],
    ]);
    expect(
      await rows(
        'print d = dynamic([10,20,30]) | project r = array_rotate_left(d, 1), s = array_shift_right(d, 1), p = array_split(d, 1), f = array_iff(dynamic([true,false,true]), d, 0)',
      ),
    ).toEqual([
      [
        [20, 30, 10],
        [null, 10, 20],
        [[10], [20, 30]],
        [10, 0, 30],
      ],
    ]);
    expect(
      await rows(
        'print m = bag_merge(dynamic({"a":1,"b":2}), dynamic({"b":3,"c":4})) | project m, k = bag_keys(m), t = make_timespan(1, 2, 3, 4), bad = make_datetime(2020, 13, 1)',
      ),
    ).toEqual([[{ a: 1, b: 2, c: 4 }, ['a', 'b', 'c'], '1.02:03:04', null]]);
  });
  it('matches a literal term exactly as a computed one (the substring test before the regex loses no match)', async () => {
    // U+017F (long s) and U+212A (Kelvin sign) fold to ASCII "s" and "k" in a case-insensitive match
    const hays = ['Ho\u017ft7 up', 'xHOST7', 'host7-x', '\u212a-9 unit', 'k9', 'a.b(c) d', 'ABC def', 'pr\u00e9fix x', ''];
    const result = await rows(
      `datatable(h:string)[${hays.map((hay) => JSON.stringify(hay)).join(', ')}] | extend n1 = "host7", n2 = "k", n3 = "b(c", n4 = "ABC", n5 = "PR\u00c9FIX"` +
        ' | project h, a = h has "host7", a2 = h has n1, b = h hasprefix "k", b2 = h hasprefix n2, c = h hassuffix "b(c", c2 = h hassuffix n3,' +
        ' d = h has_cs "ABC", d2 = h has_cs n4, e = h !has "host7", e2 = h !has n1, f = h has "PR\u00c9FIX", f2 = h has n5',
    );
    for (const [hay, ...tests] of result) {
      for (let index = 0; index < tests.length; index += 2) expect(tests[index], `${String(hay)} test ${index / 2}`).toBe(tests[index + 1]);
    }
    const has = new Map(result.map((row) => [row[0], row[1]]));
    expect([has.get('Ho\u017ft7 up'), has.get('xHOST7'), has.get('host7-x')]).toEqual([true, false, true]);
    expect(result.find((row) => row[0] === '\u212a-9 unit')?.[3]).toBe(true);
  });
});
