/**
 * POST /graph/import against the real server and Kùzu: NDJSON and CSV,
 * create (409 over rows) and merge, bad lines refused before anything is
 * written, limits, permissions, realm and organization isolation, the
 * audit entry, and a spool that is gone afterwards.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect-status.js';
import { apiKeyWith } from '../helpers/members.js';
import { startTestServer } from '../helpers/server.js';
import { useSuite } from '../helpers/suite.js';

const NDJSON = 'application/x-ndjson';
const CSV = 'text/csv';
const lines = (rows: readonly unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';

describe('POST /graph/import', () => {
  const ctx = useSuite(async (own) => {
    const server = own(await startTestServer({ GRAPH_IMPORT_MAX_BYTES: '200000' }));
    const alice = await server.register('Import Alice');
    const bob = await server.register('Import Bob');
    for (const name of ['ndjson', 'csv', 'merge', 'bad', 'conflict', 'mixed']) {
      expect((await server.request('POST', '/realms', { token: alice.token, body: { name } })).status).toBe(201);
    }
    return { server, alice, bob };
  });

  const post = (token: string, query: string, body: string, contentType: string, undocumented?: string) =>
    ctx.server.request('POST', `/graph/import?${query}`, { token, body, headers: { 'content-type': contentType }, ...(undocumented ? { undocumented } : {}) });
  const cypher = async (realm: string, query: string) => {
    const answer = await ctx.server.request('POST', '/graph/cypher', { token: ctx.alice.token, body: { realm, query } });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.rows as Record<string, unknown>[];
  };
  const stats = async (realm: string, token = ctx.alice.token) => (await ctx.server.request('GET', `/graph/stats?realm=${realm}&labels=true`, { token })).body;

  it('loads NDJSON nodes and relationships (in any order) in one COPY transaction, typed', async () => {
    const rows = [
      { type: 'DEPENDS_ON', _from: 'Service:checkout', _to: 'Service:payments', weight: 3 },
      { label: 'Service', _key: 'payments', name: 'Payments', tier: 1, critical: true, ratio: 0.5, tags: ['a', 'b'] },
      { label: 'Service', _key: 'checkout', name: 'Checkout, "the" cart', tier: 2, note: 'two\nlines' },
      { label: 'Team', _key: 'core', name: null },
      { type: 'OWNS', _from: 'Team:core', _to: 'Service:payments' },
    ];
    const answer = await post(ctx.alice.token, 'realm=ndjson', lines(rows), NDJSON);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ realm: 'ndjson', mode: 'create', nodes: 3, relationships: 2, method: 'copy' });
    expect(await stats('ndjson')).toMatchObject({ node_count: 3, relationship_count: 2, labels: { Service: 2, Team: 1 } });
    const got = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent('Service:checkout')}?realm=ndjson`, { token: ctx.alice.token });
    expect(got.body.properties).toEqual({ _key: 'checkout', name: 'Checkout, "the" cart', tier: 2, note: 'two\nlines' });
    const payments = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent('Service:payments')}?realm=ndjson`, { token: ctx.alice.token });
    expect(payments.body.properties).toEqual({ _key: 'payments', name: 'Payments', tier: 1, critical: true, ratio: 0.5, tags: '["a","b"]' });
    expect(await cypher('ndjson', 'MATCH (a:Service)-[r:DEPENDS_ON]->(b:Service) RETURN a._key AS a, b._key AS b, r.weight AS w')).toEqual([
      { a: 'checkout', b: 'payments', w: 3 },
    ]);
    // the search index covers imported nodes
    const found = await ctx.server.request('GET', '/graph/search?realm=ndjson&query=payments', { token: ctx.alice.token });
    expect(found.body.items.map((item: { id: string }) => item.id)).toContain('Service:payments');
    // the spool is gone
    expect(readdirSync(join(ctx.server.dataDir, 'graph-import'))).toEqual([]);
  });

  it('loads CSV with typed header columns; nodes and relationships are separate files', async () => {
    const nodes = 'label,_key,name,tier:int,score:float,active:bool\nHost,h1,"web, one",1,2,true\nHost,h2,db,,2.5,false\nHost,h3,"""quoted""",3,,\n';
    const loaded = await post(ctx.alice.token, 'realm=csv', nodes, `${CSV}; charset=utf-8`);
    expect(loaded.status, loaded.text).toBe(200);
    expect(loaded.body).toMatchObject({ nodes: 3, relationships: 0, method: 'copy' });
    const rels = 'type,_from,_to,since:int\nLINKS,Host:h1,Host:h2,2020\nLINKS,Host:h2,Host:h3,\n';
    // the relationship table is empty: create mode takes it although the Host table holds rows
    const linked = await post(ctx.alice.token, 'realm=csv', rels, CSV);
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body).toMatchObject({ nodes: 0, relationships: 2, method: 'copy' });
    expect(await cypher('csv', 'MATCH (h:Host) RETURN h._key AS k, h.name AS name, h.tier AS tier, h.score AS score, h.active AS active ORDER BY k')).toEqual([
      { k: 'h1', name: 'web, one', tier: 1, score: 2, active: true },
      { k: 'h2', name: 'db', tier: null, score: 2.5, active: false },
      { k: 'h3', name: '"quoted"', tier: 3, score: null, active: null },
    ]);
    expect(await cypher('csv', 'MATCH (:Host)-[r:LINKS]->(b:Host) RETURN b._key AS k, r.since AS since ORDER BY k')).toEqual([
      { k: 'h2', since: 2020 },
      { k: 'h3', since: null },
    ]);
  });

  it('refuses tables that hold rows with 409 unless mode=merge, which upserts', async () => {
    const first = lines([
      { label: 'Item', _key: 'a', name: 'A', size: 1 },
      { label: 'Item', _key: 'b', name: 'B' },
    ]);
    expect((await post(ctx.alice.token, 'realm=conflict', first, NDJSON)).status).toBe(200);
    const again = await post(ctx.alice.token, 'realm=conflict', lines([{ label: 'Item', _key: 'c' }]), NDJSON);
    expectError(again, 409, 'conflict');
    expect(again.body.error.details).toEqual({ tables: ['Item'] });
    expect((await stats('conflict')).node_count).toBe(2);
    const merged = await post(
      ctx.alice.token,
      'realm=conflict&mode=merge',
      lines([
        { label: 'Item', _key: 'a', size: 5 },
        { label: 'Item', _key: 'c', name: 'C' },
        { type: 'NEXT', _from: 'Item:a', _to: 'Item:z' },
      ]),
      NDJSON,
    );
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toEqual({ realm: 'conflict', mode: 'merge', nodes: 2, relationships: 1, method: 'upsert' });
    // upsert semantics: a property not given keeps its value; a missing end node is created with its key
    expect(await cypher('conflict', 'MATCH (i:Item) RETURN i._key AS k, i.name AS name, i.size AS size ORDER BY k')).toEqual([
      { k: 'a', name: 'A', size: 5 },
      { k: 'b', name: 'B', size: null },
      { k: 'c', name: 'C', size: null },
      { k: 'z', name: null, size: null },
    ]);
    // merge into empty tables is the bulk path
    const fresh = await post(ctx.alice.token, 'realm=merge&mode=merge', lines([{ label: 'Item', _key: 'x' }]), NDJSON);
    expect(fresh.body).toMatchObject({ nodes: 1, method: 'copy' });
  });

  it('refuses a bad line with 400 naming it, and writes nothing', async () => {
    const good = Array.from({ length: 50 }, (_, i) => JSON.stringify({ label: 'Thing', _key: `t${i}`, n: i }));
    const cases: [string, string, string][] = [
      ['not JSON', [...good, '{"label": "Thing", "_key": '].join('\n'), 'line 51: not JSON'],
      ['bad label', [...good.slice(0, 3), JSON.stringify({ label: '1bad', _key: 'x' })].join('\n'), 'line 4: "label"'],
      ['no key', [JSON.stringify({ label: 'Thing' })].join('\n'), 'line 1: "_key"'],
      ['type mismatch', [...good, JSON.stringify({ label: 'Thing', _key: 'y', n: 'text' })].join('\n'), 'line 51: property Thing.n holds INT64 values'],
      ['bad end', [...good, JSON.stringify({ type: 'R', _from: 'Thing', _to: 'Thing:t1' })].join('\n'), 'line 51: "_from" must be a node id'],
      ['both kinds', JSON.stringify({ label: 'Thing', _key: 'a', type: 'R' }), 'line 1: a line is a node'],
      ['too deep', JSON.stringify({ label: 'Thing', _key: 'a', v: JSON.parse('['.repeat(80) + ']'.repeat(80)) }), 'line 1: nests deeper than 64'],
      [
        'kind clash',
        [JSON.stringify({ label: 'Thing', _key: 'a' }), JSON.stringify({ type: 'Thing', _from: 'A:1', _to: 'A:2' })].join('\n'),
        'line 2: "Thing" is a node label',
      ],
    ];
    for (const [what, body, message] of cases) {
      const answer = await post(ctx.alice.token, 'realm=bad', body, NDJSON);
      expectError(answer, 400, 'validation_error');
      expect(answer.body.error.message, what).toContain(message);
    }
    const csvCases: [string, string][] = [
      ['label,_key,n:int\nThing,a,1\nThing,b,x\n', 'line 3: column n: "x" is not an integer'],
      ['label,_key\nThing,a,extra\n', 'line 2: 3 cells where the header has 2'],
      ['label,_key,n:date\n', 'line 1: column n: the type is string, int, float or bool'],
      ['name,size\nx,1\n', 'line 1: the header needs the columns label, _key'],
      ['label,_key\nThing,"open\n', 'line 2: a quoted cell is not closed'],
      ['label,_key\nThing,a"b\n', 'line 2: a quote inside an unquoted cell'],
    ];
    for (const [body, message] of csvCases) {
      const answer = await post(ctx.alice.token, 'realm=bad', body, CSV);
      expectError(answer, 400, 'validation_error');
      expect(answer.body.error.message).toContain(message);
    }
    // what the engine refuses (a duplicate key, a relationship whose end node is missing) rolls the whole load back
    const duplicate = await post(ctx.alice.token, 'realm=bad', lines([...good.map((line) => JSON.parse(line)), { label: 'Thing', _key: 't1' }]), NDJSON);
    expectError(duplicate, 400, 'validation_error');
    expect(duplicate.body.error.message).toContain('nothing was written');
    expect(duplicate.body.error.message).not.toContain(ctx.server.dataDir);
    const dangling = await post(
      ctx.alice.token,
      'realm=bad',
      lines([...good.map((line) => JSON.parse(line)), { type: 'R', _from: 'Thing:t1', _to: 'Thing:missing' }]),
      NDJSON,
    );
    expectError(dangling, 400, 'validation_error');
    expect(await stats('bad')).toMatchObject({ node_count: 0, relationship_count: 0 });
    expectError(await post(ctx.alice.token, 'realm=bad', '\n\n', NDJSON), 400, 'validation_error');
    expect(readdirSync(join(ctx.server.dataDir, 'graph-import'))).toEqual([]);
  });

  it('bounds the body, names the accepted types, and checks permissions, realm and organization', async () => {
    const big = lines(Array.from({ length: 5000 }, (_, i) => ({ label: 'Big', _key: `b${i}`, text: 'x'.repeat(40) })));
    expectError(await post(ctx.alice.token, 'realm=mixed', big, NDJSON), 413, 'payload_too_large');
    expectError(await post(ctx.alice.token, 'realm=mixed', '{}', 'application/json'), 415, 'unsupported_media_type');
    expectError(await post(ctx.alice.token, 'realm=mixed&mode=replace', lines([{ label: 'A', _key: 'a' }]), NDJSON), 400, 'validation_error');
    const reader = await apiKeyWith(ctx.server, ctx.alice.token, ['graph:read']);
    expectError(await post(reader, 'realm=mixed', lines([{ label: 'A', _key: 'a' }]), NDJSON), 403, 'forbidden');
    // bob has no realm "mixed"; his own default realm is his alone
    expectError(await post(ctx.bob.token, 'realm=mixed', lines([{ label: 'A', _key: 'a' }]), NDJSON), 404, 'not_found');
    expect((await post(ctx.bob.token, '', lines([{ label: 'A', _key: 'bob-a' }]), NDJSON)).status).toBe(200);
    expect((await post(ctx.alice.token, '', lines([{ label: 'A', _key: 'alice-a' }]), NDJSON)).status).toBe(200);
    expect(await cypher('default', 'MATCH (a:A) RETURN a._key AS k')).toEqual([{ k: 'alice-a' }]);
    expect((await stats('default', ctx.bob.token)).node_count).toBe(1);
    const audit = await ctx.server.request('GET', '/activity/audit-log?limit=200', { token: ctx.alice.token });
    expect(audit.body.items.some((entry: { action: string; resource: { kind: string } }) => entry.resource.kind.startsWith('graph'))).toBe(true);
  });
});
