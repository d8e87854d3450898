/**
 * /graph/cypher decides what a query does by the engine's plan: every
 * spelling of a refused operation is refused, for a graph:read key and for a
 * graph:write key, and none of them reaches a file, another organization's
 * graph or the store's own connection. Reads and realm writes still work.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownTempDir, useSuite } from '../helpers/suite.js';
import { startTestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';
import { apiKeyWith } from '../helpers/members.js';

const MARKER = 'MARKER_CONTENT_7f3a9';

describe('/graph/cypher refusals', () => {
  const ctx = useSuite(async (own) => {
    const server = own(await startTestServer());
    const owner = await server.register('Cypher org');
    const other = await server.register('Other org');
    const keyWith = (permissions: string[]): Promise<string> => apiKeyWith(server, owner.token, permissions);
    const seeded = await server.request('POST', '/graph/nodes', {
      token: owner.token,
      body: {
        nodes: [
          { label: 'Service', properties: { _key: 'payments', name: 'Payments', tier: 1 } },
          { label: 'Service', properties: { _key: 'checkout', name: 'Checkout', tier: 2 } },
        ],
      },
    });
    expect(seeded.status).toBe(200);
    const rel = await server.request('POST', '/graph/relationships', {
      token: owner.token,
      body: { relationships: [{ type: 'DEPENDS_ON', from_label: 'Service', from_key: 'checkout', to_label: 'Service', to_key: 'payments' }] },
    });
    expect(rel.status).toBe(200);
    const secret = await server.request('POST', '/graph/nodes', {
      token: other.token,
      body: { nodes: [{ label: 'Secret', properties: { _key: 'other-org-secret' } }] },
    });
    expect(secret.status).toBe(200);
    const otherGraph = join(server.dataDir, 'graph', other.organization.id, 'default.kuzu');
    expect(existsSync(otherGraph)).toBe(true);
    const scratch = ownTempDir(own, 'cypher-refusals-');
    const marker = join(scratch, 'marker.csv');
    writeFileSync(marker, `${MARKER},1\n${MARKER},2\n`);
    return { server, owner, other, reader: await keyWith(['graph:read']), writer: await keyWith(['graph:read', 'graph:write']), scratch, marker, otherGraph };
  });

  const cypher = (token: string, query: string, params?: Record<string, unknown>) =>
    ctx.server.request('POST', '/graph/cypher', { token, body: params ? { query, params } : { query } });

  const out = (name: string) => join(ctx.scratch, name);
  /** [what, query]: each is refused for every caller */
  const refused = (): [string, string][] => [
    ['LOAD FROM a marker file', `LOAD FROM '${ctx.marker}' RETURN *`],
    ['LOAD FROM, file_format', `LOAD FROM '${ctx.marker}' (file_format='csv') RETURN *`],
    ['LOAD WITH HEADERS', `LOAD WITH HEADERS (a STRING, b INT64) FROM '${ctx.marker}' RETURN a`],
    ['LOAD FROM, lower case', `load from '${ctx.marker}' return *`],
    ['LOAD FROM, mixed case and newlines', `LoAd\n  FrOm\t'${ctx.marker}'\nReTuRn *`],
    ['LOAD FROM /proc/self/environ', "LOAD FROM '/proc/self/environ' (file_format='csv') RETURN *"],
    ['LOAD FROM /etc/passwd', "LOAD FROM '/etc/passwd' (file_format='csv', delim=':') RETURN *"],
    ['LOAD FROM behind the /* **/ comment trick', `/* **/ ' */ LOAD FROM '${ctx.marker}' RETURN * // '`],
    ['LOAD FROM behind a line comment trick', `// MATCH (n) RETURN n\nLOAD FROM '${ctx.marker}' RETURN *`],
    ['LOAD FROM behind a block comment', `/* MATCH (n) RETURN n */ LOAD FROM '${ctx.marker}' RETURN *`],
    ['LOAD FROM after MATCH', `MATCH (s:Service) LOAD FROM '${ctx.marker}' RETURN s._key, column0`],
    ['LOAD FROM with fake plan text in a literal', `LOAD FROM '${ctx.marker}' RETURN '│  SHOW_TABLES[1]  │\n│  Function: SHOW_TABLES  │' AS x, column0`],
    ['LOAD FROM with parameters', `LOAD FROM '${ctx.marker}' WHERE column0 <> $x RETURN *`],
    ['COPY TO a file', `COPY (MATCH (s:Service) RETURN s._key) TO '${out('copy.csv')}'`],
    ['COPY TO, lower case and comments', `copy /* x */ (match (s:Service) return s.name) to '${out('copy2.csv')}'`],
    ['COPY TO parquet', `COPY (RETURN 1) TO '${out('copy3.parquet')}'`],
    ['COPY FROM a file', `COPY Service FROM '${ctx.marker}'`],
    ['COPY FROM a subquery', 'COPY Service FROM (UNWIND [1] AS x RETURN "k" + x)'],
    ['EXPORT DATABASE', `EXPORT DATABASE '${out('never-exported')}/x'`],
    ['IMPORT DATABASE', `IMPORT DATABASE '${ctx.scratch}'`],
    ["ATTACH the other organization's graph", `ATTACH '${'OTHER'}' AS x (dbtype kuzu)`],
    ['ATTACH, lower case', `attach '${'OTHER'}' as x (dbtype kuzu)`],
    ['ATTACH, back-quoted alias', `ATTACH '${'OTHER'}' AS \`x y\` (dbtype kuzu)`],
    ['ATTACH read-only', `ATTACH '${'OTHER'}' AS x (dbtype kuzu, read_only=true)`],
    ['USE', 'USE x'],
    ['USE, back-quoted', 'use `x`'],
    ['DETACH', 'DETACH x'],
    ['INSTALL', 'INSTALL json'],
    ['LOAD EXTENSION', 'LOAD EXTENSION json'],
    ['LOAD an extension by path', `LOAD EXTENSION '${ctx.marker}'`],
    ['UNINSTALL', 'UNINSTALL json'],
    ['CALL timeout=0', 'CALL timeout=0'],
    ['CALL timeout = 0, spaced', 'CALL   timeout   =   0'],
    ['CALL TIMEOUT=0, upper case', 'CALL TIMEOUT=0'],
    ['CALL threads=1', 'CALL threads=1'],
    ['CALL a back-quoted setting', 'CALL `threads`=1'],
    ['CALL home_directory', "CALL home_directory='/'"],
    ['CALL current_setting', "CALL current_setting('timeout') RETURN *"],
    ['CALL show_attached_databases', 'CALL show_attached_databases() RETURN *'],
    ['BEGIN TRANSACTION', 'BEGIN TRANSACTION'],
    ['BEGIN TRANSACTION READ ONLY', 'begin transaction read only'],
    ['COMMIT', 'COMMIT'],
    ['ROLLBACK', 'ROLLBACK'],
    ['CHECKPOINT', 'CHECKPOINT'],
    ['CREATE NODE TABLE', 'CREATE NODE TABLE X(_key STRING PRIMARY KEY)'],
    ['CREATE NODE TABLE, lower case', 'create node table `Y`(_key string primary key)'],
    ['CREATE REL TABLE', 'CREATE REL TABLE R(FROM Service TO Service)'],
    ['DROP TABLE', 'DROP TABLE DEPENDS_ON'],
    ['DROP TABLE, back-quoted', 'DROP TABLE `Service`'],
    ['ALTER TABLE', 'ALTER TABLE Service ADD x INT64'],
    ['ALTER TABLE RENAME', 'ALTER TABLE Service RENAME TO Renamed'],
    ['CREATE MACRO', 'CREATE MACRO m(x) AS x + 1'],
    ['CREATE SEQUENCE', 'CREATE SEQUENCE s'],
    ['CALL CREATE_FTS_INDEX', "CALL CREATE_FTS_INDEX('Service', 'other', ['name'])"],
    ['CALL DROP_FTS_INDEX', "CALL DROP_FTS_INDEX('Service', 'fts')"],
    ['EXPLAIN', 'EXPLAIN MATCH (n) RETURN n'],
    ['PROFILE', 'PROFILE MATCH (n) RETURN n'],
    ['two statements', 'MATCH (n) RETURN n; MATCH (m) DETACH DELETE m'],
    ['two statements, the second a LOAD', `MATCH (n) RETURN n;\nLOAD FROM '${ctx.marker}' RETURN *`],
    ['two statements hidden by the comment trick', "/* **/ ' */ MATCH (n) RETURN count(n); MATCH (m) DETACH DELETE m // '"],
    ['full-width LOAD (Unicode lookalike)', `ＬＯＡＤ FROM '${ctx.marker}' RETURN *`],
    ['Cyrillic А in ATTACH', `\u0410TTACH '${'OTHER'}' AS x (dbtype kuzu)`],
    ['a zero-width space inside COPY', `CO\u200bPY (RETURN 1) TO '${out('zw.csv')}'`],
  ];
  const withPaths = (query: string) => query.replaceAll("'OTHER'", `'${ctx.otherGraph}'`);

  it('refuses every spelling of a refused operation for a graph:read key (400 or 403) and a graph:write key (400)', async () => {
    for (const [what, template] of refused()) {
      const query = withPaths(template);
      const read = await cypher(ctx.reader, query, template.includes('$x') ? { x: 'a' } : undefined);
      expect([400, 403], `${what} (graph:read): ${read.text}`).toContain(read.status);
      expect(['validation_error', 'cypher_syntax_error', 'forbidden'], what).toContain(read.body.error.code);
      const write = await cypher(ctx.writer, query, template.includes('$x') ? { x: 'a' } : undefined);
      expect(write.status, `${what} (graph:write): ${write.text}`).toBe(400);
      expect(['validation_error', 'cypher_syntax_error'], what).toContain(write.body.error.code);
      // nothing the engine read from a file comes back, not even in an error message
      expect(read.text, what).not.toContain(MARKER);
      expect(write.text, what).not.toContain(MARKER);
    }
    // no file was written, the realm's graph is untouched and the other organization's never became visible
    for (const name of ['copy.csv', 'copy2.csv', 'copy3.parquet', 'zw.csv', 'never-exported']) expect(existsSync(out(name)), name).toBe(false);
    const count = await cypher(ctx.reader, 'MATCH (s:Service) RETURN count(s) AS c');
    expect(count.body).toEqual({ columns: ['c'], rows: [{ c: 2 }] });
    const tables = await cypher(ctx.reader, 'CALL show_tables() RETURN name ORDER BY name');
    expect(tables.body.rows).toEqual([{ name: 'DEPENDS_ON' }, { name: 'Service' }]);
  });

  it('says why: a statement that is not a query, a refused table function, several statements, a write without graph:write', async () => {
    for (const query of [`ATTACH '${ctx.otherGraph}' AS x (dbtype kuzu)`, 'CALL timeout=0', `COPY (RETURN 1) TO '${out('named.csv')}'`, 'DROP TABLE Service']) {
      for (const token of [ctx.reader, ctx.writer]) {
        const response = await cypher(token, query);
        expect(response.status, query).toBe(400);
        expect(response.body.error.code, query).toBe('validation_error');
        expect(response.body.error.message, query).toContain('only Cypher queries run here');
      }
    }
    const load = await cypher(ctx.writer, `LOAD FROM '${ctx.marker}' RETURN *`);
    expect(load.body.error).toMatchObject({ code: 'validation_error', details: { function: 'READ_CSV_PARALLEL' } });
    const setting = await cypher(ctx.reader, "CALL current_setting('timeout') RETURN *");
    expect(setting.body.error).toMatchObject({ code: 'validation_error', details: { function: 'CURRENT_SETTING' } });
    expect(setting.body.error.details.allowed_functions).toEqual(['query_fts_index', 'show_tables', 'table_info', 'show_connection', 'show_indexes']);
    const several = await cypher(ctx.writer, 'RETURN 1; RETURN 2');
    expect(several.body.error.code).toBe('validation_error');
    expect(several.body.error.message).toContain('one Cypher statement');
    const unknown = await cypher(ctx.reader, 'RETURN $x AS x', { x: 1, y: 2 });
    expect(unknown.body.error).toMatchObject({ code: 'cypher_syntax_error', message: 'Parameter y not found.' });
    const syntax = await cypher(ctx.reader, 'MATCH (n RETURN n');
    expect(syntax.body.error.code).toBe('cypher_syntax_error');
    expect(syntax.body.error.message).toMatch(/^Parser exception: .*line: 1/);
    // a reader's write is refused by the engine's read-only transaction before it is bound
    const write = await cypher(ctx.reader, "CREATE (:Service {_key: 'nope'})");
    expect(write.status).toBe(403);
    expect(write.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'graph:write' } });
  });

  it('refuses show_functions, which crashes the engine once the realm has a full-text index, and stays up', async () => {
    expect((await ctx.server.request('GET', '/graph/search?query=payments', { token: ctx.reader })).status).toBe(200);
    for (const query of ['CALL show_functions() RETURN *', 'CALL SHOW_FUNCTIONS() RETURN name LIMIT 1', 'MATCH (n) CALL `Show_Functions`() RETURN n']) {
      for (const token of [ctx.reader, ctx.writer]) {
        const response = await cypher(token, query);
        expect(response.status, query).toBe(400);
        expect(response.body.error).toMatchObject({ code: 'validation_error', details: { function: 'SHOW_FUNCTIONS' } });
      }
    }
    const alive = await cypher(ctx.reader, 'MATCH (s:Service) RETURN count(s) AS c');
    expect(alive.status).toBe(200);
  });

  it("never shows the other organization's graph, even after ATTACH and USE were tried", async () => {
    for (const query of [`ATTACH '${ctx.otherGraph}' AS x (dbtype kuzu)`, 'USE x']) {
      expect((await cypher(ctx.writer, query)).status).toBe(400);
    }
    const secret = await cypher(ctx.writer, 'MATCH (n:Secret) RETURN n._key AS k');
    expectError(secret, 400, 'cypher_syntax_error');
    expect(secret.text).not.toContain('other-org-secret');
    const qualified = await cypher(ctx.writer, 'MATCH (n:x.Secret) RETURN n._key AS k');
    expect(qualified.status).toBe(400);
    expect(qualified.text).not.toContain('other-org-secret');
    // the other organization still reads its own
    const own = await cypher(ctx.other.token, 'MATCH (n:Secret) RETURN n._key AS k');
    expect(own.body).toEqual({ columns: ['k'], rows: [{ k: 'other-org-secret' }] });
  });

  it("leaves the store's connection as it was after settings and transactions were tried", async () => {
    for (const query of ['CALL timeout=1', 'CALL threads=1', 'BEGIN TRANSACTION', 'CALL enable_internal_catalog=true']) {
      expect((await cypher(ctx.writer, query)).status, query).toBe(400);
    }
    // store writes and reads behave: a 1 ms timeout or an open transaction would fail them
    const upserted = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.owner.token,
      body: { nodes: [{ label: 'Team', properties: { _key: 'pay', size: 4 } }] },
    });
    expect(upserted.status).toBe(200);
    const node = await ctx.server.request('GET', '/graph/nodes/Team%3Apay', { token: ctx.reader });
    expect(node.body.properties).toEqual({ _key: 'pay', size: 4 });
    const search = await ctx.server.request('GET', '/graph/search?query=payments', { token: ctx.reader });
    expect(search.body.items.map((item: { id: string }) => item.id)).toEqual(['Service:payments']);
    const removed = await ctx.server.request('DELETE', '/graph/nodes/Team%3Apay', { token: ctx.owner.token });
    expect(removed.status).toBe(200);
  });

  it('still answers reads for a graph:read key', async () => {
    const reads: [string, unknown[]][] = [
      ['MATCH (s:Service) RETURN s._key AS k ORDER BY k', [{ k: 'checkout' }, { k: 'payments' }]],
      ['MATCH (a:Service)-[:DEPENDS_ON]->(b:Service) RETURN a._key AS a, b._key AS b', [{ a: 'checkout', b: 'payments' }]],
      ['MATCH (s:Service) WITH s WHERE s.tier > 1 RETURN s._key AS k', [{ k: 'checkout' }]],
      ['UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC LIMIT 2', [{ x: 3 }, { x: 2 }]],
      [
        'MATCH (s:Service) OPTIONAL MATCH (s)-[:DEPENDS_ON]->(t) RETURN s._key AS k, count(t) AS n ORDER BY k',
        [
          { k: 'checkout', n: 1 },
          { k: 'payments', n: 0 },
        ],
      ],
      ['MATCH (s:Service) RETURN sum(s.tier) AS total, collect(s._key) IS NOT NULL AS listed', [{ total: 3, listed: true }]],
      ['MATCH p = (a:Service)-[:DEPENDS_ON*1..2]->(b) RETURN length(p) AS hops', [{ hops: 1 }]],
      ['MATCH (s:Service) RETURN s._key AS k ORDER BY k SKIP 1', [{ k: 'payments' }]],
      ['MATCH (s:Service) RETURN s._key AS k UNION MATCH (t:Service) RETURN t._key AS k', expect.arrayContaining([{ k: 'checkout' }, { k: 'payments' }])],
      ["MATCH (s:Service) WHERE s.name <> 'LOAD FROM /etc/passwd; ATTACH' // COPY TO\nRETURN count(s) AS `create`", [{ create: 2 }]],
      ["CALL show_tables() WITH name WHERE name = 'Service' RETURN name", [{ name: 'Service' }]],
      ["CALL table_info('Service') RETURN name ORDER BY name", [{ name: '_key' }, { name: 'name' }, { name: 'tier' }]],
      ['RETURN $x AS x', [{ x: 'value' }]],
    ];
    for (const [query, rows] of reads) {
      const response = await cypher(ctx.reader, query, query.includes('$x') ? { x: 'value' } : undefined);
      expect(response.status, `${query}: ${response.text}`).toBe(200);
      expect(response.body.rows, query).toEqual(rows);
    }
    // the full-text index the service keeps can be queried once search has built it
    expect((await ctx.server.request('GET', '/graph/search?query=checkout', { token: ctx.reader })).status).toBe(200);
    const fts = await cypher(ctx.reader, "CALL QUERY_FTS_INDEX('Service', 'fts', 'checkout') RETURN node._key AS k");
    expect(fts.body).toEqual({ columns: ['k'], rows: [{ k: 'checkout' }] });
  });

  it('writes nodes and relationships of the realm for a graph:write key, and refuses them for graph:read', async () => {
    const writes = [
      "CREATE (:Service {_key: 'ledger', tier: 3})",
      "MATCH (s:Service {_key: 'ledger'}) SET s.name = 'Ledger'",
      "MERGE (s:Service {_key: 'ledger'}) ON MATCH SET s.tier = 4",
      "MATCH (a:Service {_key: 'payments'}), (b:Service {_key: 'ledger'}) CREATE (a)-[:DEPENDS_ON]->(b)",
      "MATCH (s:Service {_key: 'ledger'}) SET s.name = NULL",
      "MATCH (s:Service {_key: 'ledger'}) DETACH DELETE s",
    ];
    for (const query of writes) {
      const refusedRead = await cypher(ctx.reader, query);
      expect(refusedRead.status, query).toBe(403);
      expect(refusedRead.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'graph:write' } });
      const done = await cypher(ctx.writer, query);
      expect(done.status, `${query}: ${done.text}`).toBe(200);
    }
    const merged = await cypher(ctx.writer, "MERGE (s:Service {_key: 'audit'}) RETURN s._key AS k");
    expect(merged.body.rows).toEqual([{ k: 'audit' }]);
    const stored = await ctx.server.request('GET', '/graph/nodes/Service%3Aaudit', { token: ctx.reader });
    expect(stored.status).toBe(200);
    expect((await ctx.server.request('GET', '/graph/nodes/Service%3Aledger', { token: ctx.reader })).status).toBe(404);
    // the other organization's realm saw none of it
    const elsewhere = await cypher(ctx.other.token, 'MATCH (n) RETURN count(n) AS c');
    expect(elsewhere.body).toEqual({ columns: ['c'], rows: [{ c: 1 }] });
  });

  it('bounds params: too deep, too many keys, too many values are 400 before any work', async () => {
    // 1,000 levels: the edge's bound on every JSON body refuses it before the route sees it
    let deep: unknown = 1;
    for (let level = 0; level < 1000; level += 1) deep = { a: deep };
    const farTooDeep = await cypher(ctx.reader, 'RETURN 1 AS x', { p: deep });
    expectError(farTooDeep, 400, 'payload_too_deep');
    // 20 levels pass the edge (64) but not Cypher's own parameter bound (16)
    let twenty: unknown = 1;
    for (let level = 0; level < 20; level += 1) twenty = { a: twenty };
    const tooDeep = await cypher(ctx.reader, 'RETURN 1 AS x', { p: twenty });
    expectError(tooDeep, 400, 'validation_error');
    expect(tooDeep.text).toContain('16 levels');
    let listDeep: unknown = [1];
    for (let level = 0; level < 16; level += 1) listDeep = [listDeep];
    expect((await cypher(ctx.reader, 'RETURN 1 AS x', { p: listDeep })).status).toBe(400);
    const manyKeys = Object.fromEntries(Array.from({ length: 1001 }, (_, index) => [`k${index}`, index]));
    const keys = await cypher(ctx.reader, 'RETURN 1 AS x', manyKeys);
    expect(keys.status).toBe(400);
    expect(keys.text).toContain('1000 parameters');
    const values = await cypher(ctx.reader, 'RETURN 1 AS x', { p: Array.from({ length: 100_001 }, () => 0) });
    expect(values.status).toBe(400);
    expect(values.text).toContain('100000 values');
    let nested: unknown = [[['deep']]];
    for (let level = 0; level < 4; level += 1) nested = [nested];
    const fine = await cypher(ctx.reader, 'RETURN $p AS p', { p: nested });
    expect(fine.status, fine.text).toBe(200);
    expect(fine.body.rows).toEqual([{ p: nested }]);
  });
});
