/**
 * The KQL translation cache (ingest/kql/run.ts) against a real DuckDB: the
 * same query over the same schema reuses its translation, a new column or
 * table is a new schema (never a stale translation), two realms never share
 * one, and a kept prepared statement reads the rows as they are. And the
 * parser warm-up at start when an organization uses the Advanced tier (real
 * server, restarted on the same data directory).
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realmSources } from '../../ingest/kql/context-sources.js';
import { kqlCompileStats, runKql } from '../../ingest/kql/run.js';
import { qualified, schemaName } from '../../ingest/table-catalog.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer } from '../helpers/server.js';

const ORG = 'org_cache';
const OPTIONS = { limit: 100, timeoutMs: 30_000 };

describe('KQL translation cache', () => {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  const run = async (realm: string, query: string) => runKql(connection, query, await realmSources(connection, ORG, realm), OPTIONS);

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
    for (const realm of ['one', 'two']) {
      await connection.run(`CREATE SCHEMA "${schemaName(ORG, realm)}"`);
      await connection.run(
        `CREATE TABLE ${qualified(schemaName(ORG, realm), 'context_events')} ("at" TIMESTAMPTZ NOT NULL, "label" VARCHAR, "body" VARCHAR, "props" BLOB)`,
      );
      await connection.run(
        `INSERT INTO ${qualified(schemaName(ORG, realm), 'context_events')} VALUES (TIMESTAMPTZ '2025-01-01 00:00:00+00', '${realm}', 'b', NULL)`,
      );
    }
  }, 60_000);

  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
  });

  it('reuses the translation of the same query over the same schema', async () => {
    const first = await run('one', 'context_events | where label == "one" | project label, body');
    const before = kqlCompileStats();
    const second = await run('one', 'context_events | where label == "one" | project label, body');
    const after = kqlCompileStats();
    expect(after.hits).toBe(before.hits + 1);
    expect(after.misses).toBe(before.misses);
    expect(second.sql).toBe(first.sql);
    expect(second.rows).toEqual([['one', 'b']]);
    // a different text is a different entry
    await run('one', 'context_events | where label == "one" | project label');
    expect(kqlCompileStats().misses).toBe(after.misses + 1);
  }, 60_000);

  it('translates again once a column or a table is added', async () => {
    const refused = await run('one', 'context_events | project service').catch((error: unknown) => error);
    expect((refused as { code?: string }).code).toBe('kql_error');
    const wide = await run('one', 'context_events | take 1');
    expect(wide.columns.map((column) => column.name)).toEqual(['at', 'label', 'body', 'props']);
    await connection.run(`ALTER TABLE ${qualified(schemaName(ORG, 'one'), 'context_events')} ADD COLUMN "service" VARCHAR`);
    await connection.run(`UPDATE ${qualified(schemaName(ORG, 'one'), 'context_events')} SET service = 'api'`);
    const misses = kqlCompileStats().misses;
    expect((await run('one', 'context_events | take 1')).columns.map((column) => column.name)).toEqual(['at', 'label', 'body', 'props', 'service']);
    expect(kqlCompileStats().misses).toBe(misses + 1);
    expect((await run('one', 'context_events | project service')).rows).toEqual([['api']]);
    await connection.run(
      `CREATE TABLE ${qualified(schemaName(ORG, 'one'), 'deploys')} ("at" TIMESTAMPTZ NOT NULL, "label" VARCHAR, "body" VARCHAR, "props" BLOB)`,
    );
    const after = kqlCompileStats().misses;
    await run('one', 'context_events | take 1');
    expect(kqlCompileStats().misses).toBe(after + 1);
  }, 60_000);

  it('never shares a translation between realms', async () => {
    const query = 'context_events | project label';
    expect((await run('two', query)).rows).toEqual([['two']]);
    const one = await run('one', query);
    expect(one.rows).toEqual([['one']]);
    expect(one.sql).toContain(schemaName(ORG, 'one'));
    expect(one.sql).not.toContain(schemaName(ORG, 'two'));
  }, 60_000);

  it('runs a kept prepared statement over the rows as they are now, and again after a timeout stopped it', async () => {
    const query = 'context_events | where label == "two" | count';
    expect((await run('two', query)).rows).toEqual([[1]]);
    await connection.run(`INSERT INTO ${qualified(schemaName(ORG, 'two'), 'context_events')} VALUES (TIMESTAMPTZ '2025-01-02 00:00:00+00', 'two', 'c', NULL)`);
    expect((await run('two', query)).rows).toEqual([[2]]);
    const slow = 'range x from 1 to 3000000000 step 1 | summarize dcount(x % 1000003), sum(x)';
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const stopped = await runKql(connection, slow, [], { limit: 10, timeoutMs: 200 }).catch((error: unknown) => error);
      expect((stopped as { code?: string }).code).toBe('query_timeout');
    }
    expect((await run('two', query)).rows).toEqual([[2]]);
  }, 60_000);

  it('runs a large unordered result without the insertion order and gives the session its order back, also after a failure', async () => {
    const setting = async () => (await connection.runAndReadAll("SELECT current_setting('preserve_insertion_order')")).getRowsJS()[0]?.[0];
    const wide = { limit: 10_000, timeoutMs: 30_000 };
    const tables = await realmSources(connection, ORG, 'one');
    const rows = await runKql(connection, 'range i from 1 to 30000 step 1 | where i % 2 == 0', tables, wide);
    expect(rows.stats).toMatchObject({ row_count: 10_000, truncated: true });
    expect(new Set(rows.rows.map((row) => row[0])).size).toBe(10_000);
    expect(rows.rows.every((row) => (row[0] as number) % 2 === 0)).toBe(true);
    expect(await setting()).toBe(true);
    // an ordered result keeps its order (a sort of the query's own)
    const sorted = await runKql(connection, 'range i from 1 to 20000 step 1 | sort by i asc', tables, wide);
    expect(sorted.rows.slice(0, 3)).toEqual([[1], [2], [3]]);
    await expect(runKql(connection, 'print x = toint("a") | extend y = range(1, 1, 0)', tables, wide)).rejects.toThrow();
    await expect(runKql(connection, 'context_events | extend n = toscalar(range i from 1 to 2 step 1) | where n > 0', tables, wide)).resolves.toBeDefined();
    expect(await setting()).toBe(true);
  });
});

describe('KQL parser warm-up at start', () => {
  it('warms the parser when an organization uses the Advanced tier', async () => {
    const env = { JWT_SECRET: 'kql-warm-test-secret-0123456789abcdef0123' };
    const first = await startTestServer(env);
    const session = await first.register('Warm Co');
    expect((await first.request('PATCH', '/settings', { token: session.token, body: { context_tier: 'advanced' } })).status).toBe(200);
    await first.service.stop();
    const logLines: string[] = [];
    const second = await startTestServer({ ...env, LOG_LEVEL: 'info' }, { dataDir: first.dataDir, logLines });
    try {
      await eventually(() => logLines.find((line) => line.includes('KQL parser warmed')), { timeout: 120_000, what: 'the KQL parser warm-up log line' });
      const answer = await second.request('POST', '/context/kql', { token: session.token, body: { query: 'print x = 1', realm: 'default' } });
      expect(answer.status).toBe(200);
      expect(answer.body.rows).toEqual([[1]]);
    } finally {
      await second.stop();
      await first.stop();
    }
  }, 180_000);
});
