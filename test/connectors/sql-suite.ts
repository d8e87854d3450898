/**
 * One end-to-end suite for the SQL connectors, run by postgres.test.ts and
 * mysql.test.ts against the machine's real servers: sources created through
 * /sources on a scratch orders database, validated, their tools called
 * through /mcp (the service's MCP endpoint, so through the catalog, the
 * egress guard and the interceptors), synced into the graph.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import type { ScratchDatabase } from './sql-scratch.js';
import type { ConformanceToolCall } from '../../connectors/conformance/index.js';
import { expectError } from '../helpers/expect-status.js';

export interface SqlSpec {
  readonly kind: 'postgres' | 'mysql';
  readonly unreachable: () => Promise<string | null>;
  readonly scratch: () => Promise<ScratchDatabase>;
  /** a statement that sleeps `seconds` */
  readonly sleep: (seconds: number) => string;
  /** the n-th (1-based) placeholder */
  readonly param: (n: number) => string;
  /** the schema the orders tables are in */
  readonly schemaOf: (db: ScratchDatabase) => string;
  /** fields of a login the server refuses, and the words its reason has */
  readonly badLogin: (db: ScratchDatabase) => { config: Record<string, unknown>; reason: RegExp };
}

interface Outcome {
  readonly result?: any;
  readonly error?: { code: string; message: string; details?: any };
}

export function describeSqlConnector(spec: SqlSpec): void {
  describe(`${spec.kind} connector against the real server`, () => {
    let server: TestServer;
    let db: ScratchDatabase;
    let owner: Session;
    let other: Session;
    let client: Client;
    const sources: Record<string, string> = {};

    const config = (extra: Record<string, unknown> = {}, login = db.readWrite) => ({
      host: '127.0.0.1',
      port: db.port,
      database: db.database,
      user: login.user,
      password: login.password,
      tls: 'disable',
      ...extra,
    });
    const createSource = async (name: string, body: Record<string, unknown>, session = owner, target = server): Promise<string> => {
      const created = await target.request('POST', '/sources', { token: session.token, body: { name, connector: spec.kind, config: body } });
      expect(created.status, created.text).toBe(201);
      return created.body.id as string;
    };
    const call = async (tool: string, args: Record<string, unknown>, sourceId = sources['main']!): Promise<Outcome> => {
      const answer = (await client.callTool({
        name: 'execute_connector_tool',
        arguments: { tool: `${spec.kind}.${tool}`, arguments: args, source_id: sourceId },
      })) as { structuredContent?: Outcome };
      return answer.structuredContent ?? {};
    };
    const count = async (table: string): Promise<number> => Number(Object.values((await db.admin(`SELECT COUNT(*) AS n FROM ${table}`))[0] as object)[0]);

    beforeAll(async () => {
      db = await spec.scratch();
      server = await startTestServer();
      owner = await server.register();
      other = await server.register();
      sources['main'] = await createSource('orders db', config());
      sources['limited'] = await createSource('orders db (small limits)', config({ row_limit: 5, statement_timeout_ms: 300 }));
      client = new Client({ name: 'sql-suite', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${owner.token}` } } }),
      );
    });
    afterAll(async () => {
      await client?.close();
      await server?.stop();
      await db?.drop();
    });

    it('is in /sources/catalog with its config schema and tools; the password is masked on read; another organization gets 404', async () => {
      const catalog = await server.request('GET', '/sources/catalog', { token: owner.token });
      const entry = (catalog.body.connectors ?? catalog.body.items ?? []).find((c: any) => c.kind === spec.kind);
      expect(entry, catalog.text.slice(0, 300)).toBeDefined();
      expect(JSON.stringify(entry)).toContain('statement_timeout_ms');
      for (const tool of ['list_schemas', 'describe_table', 'query', 'explain', 'slow_queries', 'locks', 'connections'])
        expect(JSON.stringify(entry)).toContain(tool);
      const read = await server.request('GET', `/sources/${sources['main']}`, { token: owner.token });
      expect(read.body.config).toMatchObject({ user: db.readWrite.user, password: '********' });
      expect(read.text).not.toContain(db.readWrite.password);
      expect((await server.request('GET', `/sources/${sources['main']}`, { token: other.token })).status).toBe(404);
      expect((await server.request('GET', `/sources/${sources['main']}/test`, { token: other.token })).status).toBe(404);
    });

    it("validates: connects, reads the version, the transaction is read-only; a refused login is 422 with the driver's reason", async () => {
      const ok = await server.request('GET', `/sources/${sources['main']}/test`, { token: owner.token });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.source.status).toBe('synced');
      const bad = spec.badLogin(db);
      const refused = await server.request('GET', `/sources/${await createSource('bad login', config(bad.config))}/test`, { token: owner.token });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'unauthorized' } });
      expect(refused.body.error.message).toMatch(bad.reason);
    });

    it('a source whose validation failed offers no tools to runs until it validates again', async () => {
      const id = await createSource('flaky login', config(spec.badLogin(db).config));
      expect((await server.request('GET', `/sources/${id}/test`, { token: owner.token })).status).toBe(422);
      expect((await call('list_schemas', {}, id)).error?.code).toBe('unknown_source');
      const fixed = await server.request('PATCH', `/sources/${id}`, { token: owner.token, body: { config: config() } });
      expect(fixed.status, fixed.text).toBe(200);
      expect((await server.request('GET', `/sources/${id}/test`, { token: owner.token })).status).toBe(200);
      expect((await call('list_schemas', {}, id)).result).toBeDefined();
    });

    it('lists schemas and describes a table: columns, primary key, foreign keys both ways, indexes', async () => {
      const schemas = await call('list_schemas', {});
      const schema = schemas.result.schemas.find((s: any) => s.name === spec.schemaOf(db));
      expect(schema.tables.map((t: any) => t.name).sort()).toEqual(['customers', 'order_items', 'orders']);
      const described = (await call('describe_table', { table: 'orders', schema: spec.schemaOf(db) })).result;
      expect(described.columns.map((c: any) => [c.name, c.nullable])).toEqual([
        ['id', false],
        ['customer_id', false],
        ['total', false],
        ['status', false],
      ]);
      expect(described.primary_key).toEqual(['id']);
      expect(described.foreign_keys).toEqual([
        { name: 'orders_customer_fk', columns: ['customer_id'], references: { schema: spec.schemaOf(db), table: 'customers', columns: ['id'] } },
      ]);
      expect(described.referenced_by).toMatchObject([
        { name: 'order_items_order_fk', table: 'order_items', columns: ['order_id'], referenced_columns: ['id'] },
      ]);
      expect(described.indexes.map((i: any) => i.name)).toContain('orders_status_idx');
      expect((await call('describe_table', { table: 'nope', schema: spec.schemaOf(db) })).error?.code).toBe('not_found');
    });

    it('queries with bound parameters: a value like `1; drop table x` is only a value', async () => {
      const found = await call('query', { sql: `SELECT id, name FROM customers WHERE email = ${spec.param(1)} ORDER BY id`, params: ['grace@example.test'] });
      expect(found.result).toMatchObject({ rows: [[2, 'Grace']], row_count: 1, truncated: false });
      expect(found.result.columns.map((c: any) => c.name)).toEqual(['id', 'name']);
      const hostile = await call('query', { sql: `SELECT id FROM customers WHERE name = ${spec.param(1)}`, params: ['1; DROP TABLE customers'] });
      expect(hostile.result).toMatchObject({ rows: [], row_count: 0 });
      expect(await count('customers')).toBe(3);
    });

    it('writes are refused by the database (read-only transaction), even for a read-write login', async () => {
      for (const sql of [
        "INSERT INTO customers (name, email) VALUES ('Mallory', 'm@example.test')",
        "UPDATE orders SET status = 'void'",
        'DELETE FROM order_items',
        'CREATE TABLE intruder (id INT)',
      ]) {
        const refused = await call('query', { sql });
        expect(refused.error?.code, `${sql}: ${JSON.stringify(refused)}`).toBe('read_only_violation');
        expect(refused.error?.message).toMatch(/read-only|READ ONLY/i);
      }
      expect([await count('customers'), await count('order_items')]).toEqual([3, 3]);
      expect(await count(`(SELECT * FROM orders WHERE status = 'void') AS v`)).toBe(0);
    });

    it('two statements in one text are refused by the driver protocol', async () => {
      const refused = await call('query', { sql: 'SELECT 1; SELECT 2' });
      expect(refused.error?.code).toBe('query_failed');
      expect(await count('customers')).toBe(3);
    });

    it('truncates at the row limit and says so', async () => {
      const limited = await call('query', { sql: 'SELECT id FROM orders ORDER BY id' }, sources['limited']);
      expect(limited.result).toMatchObject({ rows: [[1], [2], [3], [4], [5]], row_count: 5, truncated: true });
      const fewer = await call('query', { sql: 'SELECT id FROM orders ORDER BY id', max_rows: 2 });
      expect(fewer.result).toMatchObject({ row_count: 2, truncated: true });
      const all = await call('query', { sql: 'SELECT id FROM orders ORDER BY id' });
      expect(all.result).toMatchObject({ row_count: 12, truncated: false });
    });

    it('a statement past the statement timeout ends with a clear tool error', async () => {
      const slow = await call('query', { sql: spec.sleep(3) }, sources['limited']);
      expect(slow.error?.code).toBe('statement_timeout');
      expect(slow.error?.message).toContain('300 ms');
      // the pooled connection is usable afterwards
      expect((await call('query', { sql: 'SELECT 1 AS one' }, sources['limited'])).result.rows).toEqual([[1]]);
    });

    it('explains a query as a JSON plan without running it', async () => {
      const plan = await call('explain', { sql: `SELECT * FROM orders WHERE customer_id = ${spec.param(1)}`, params: [1] });
      expect(plan.result.format).toBe('json');
      expect(JSON.stringify(plan.result.plan)).toContain('orders');
      expect((await call('explain', { sql: 'DELETE FROM orders; SELECT 1' })).error?.code).toBe('query_failed');
      expect(await count('orders')).toBe(12);
    });

    it('slow_queries reports whether statement statistics exist and the statement running now; locks and connections answer', async () => {
      const sleeper = spec.kind === 'postgres' ? 'pg_sleep' : 'SLEEP';
      const running = startSleeper(spec, db);
      let seen: any = null;
      for (let attempt = 0; attempt < 50 && seen === null; attempt++) {
        const slow = await call('slow_queries', { min_duration_ms: 100 });
        expect(slow.result.statistics).toHaveProperty('available');
        if (slow.result.statistics.available === false) expect(slow.result.statistics.reason).toEqual(expect.any(String));
        seen = slow.result.running.find((r: any) => String(r.query).includes(sleeper)) ?? null;
        if (seen === null) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(seen).not.toBeNull();
      const connections = (await call('connections', {})).result;
      expect(connections.total).toBeGreaterThanOrEqual(2);
      expect(connections.max_connections).toBeGreaterThan(0);
      const locks = await call('locks', {});
      expect(locks.error, JSON.stringify(locks.error)).toBeUndefined();
      expect(locks.result).toHaveProperty('waits');
      await running.stop();
    });

    it('syncs schemas, tables, columns and foreign keys into the graph, seen only by its organization', async () => {
      const started = await server.request('POST', `/sources/${sources['main']}/sync`, { token: owner.token });
      expect(started.status, started.text).toBe(202);
      let job = started.body;
      while (job.status === 'running') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = (await server.request('GET', `/sources/${sources['main']}/jobs/${started.body.id}`, { token: owner.token })).body;
      }
      expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded', details: { tables: 3, columns: 11, foreign_keys: 2, schemas: 1 } });
      const tableKey = `${spec.kind}://127.0.0.1:${db.port}/${db.database}/${spec.schemaOf(db)}.orders`;
      const node = await server.request('GET', `/graph/nodes/${encodeURIComponent(`Table:${tableKey}`)}`, { token: owner.token });
      if (node.status === 503) {
        console.warn('graph store not available: the graph half of this test is skipped');
        return;
      }
      expect(node.status, node.text).toBe(200);
      const around = await server.request('GET', `/graph/nodes/${encodeURIComponent(`Table:${tableKey}`)}/expand`, { token: owner.token });
      expect(around.status, around.text).toBe(200);
      const types = (around.body.relationships as { type: string }[]).map((r) => r.type).sort();
      expect(types).toEqual(['HAS_COLUMN', 'HAS_COLUMN', 'HAS_COLUMN', 'HAS_COLUMN', 'HAS_TABLE', 'REFERENCES', 'REFERENCES']);
      expect(JSON.stringify(around.body.nodes)).toContain(`${spec.schemaOf(db)}.customers`);
      expect((await server.request('GET', `/graph/nodes/${encodeURIComponent(`Table:${tableKey}`)}`, { token: other.token })).status).toBe(404);
    });

    it("another organization's runs do not see the source's tools", async () => {
      const outsider = new Client({ name: 'outsider', version: '1.0.0' });
      await outsider.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${other.token}` } } }),
      );
      const answer = (await outsider.callTool({
        name: 'execute_connector_tool',
        arguments: { tool: `${spec.kind}.query`, arguments: { sql: 'SELECT 1' }, source_id: sources['main'] },
      })) as { structuredContent?: Outcome };
      await outsider.close();
      expect(['unknown_tool', 'unknown_source']).toContain(answer.structuredContent?.error?.code);
    });

    it('without EGRESS_ALLOW the guard refuses the loopback server: a literal address when saved, a name when validated', async () => {
      const closed = await startTestServer({ EGRESS_ALLOW: '' });
      try {
        const session = await closed.register();
        const literal = await closed.request('POST', '/sources', { token: session.token, body: { name: 'loopback', connector: spec.kind, config: config() } });
        expectError(literal, 422, 'egress_refused');
        const byName = await createSource('by name', config({ host: 'localhost' }), session, closed);
        const refused = await closed.request('GET', `/sources/${byName}/test`, { token: session.token });
        expect(refused.status).toBe(422);
        expect(refused.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback' } });
      } finally {
        await closed.stop();
      }
    });
  });
}

/** a long statement run by the source's own login (whose statements it may see), until stopped */
function startSleeper(spec: SqlSpec, db: ScratchDatabase): { stop(): Promise<void> } {
  const statement = spec.sleep(30);
  const done =
    spec.kind === 'postgres'
      ? import('pg').then(async ({ default: pg }) => {
          const sleeper = new pg.Client({ host: '127.0.0.1', port: db.port, database: db.database, user: db.readWrite.user, password: db.readWrite.password });
          await sleeper.connect();
          return {
            pid: (await sleeper.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number,
            run: sleeper.query(statement).catch(() => undefined),
            end: () => sleeper.end(),
          };
        })
      : import('mysql2/promise').then(async ({ default: mysql }) => {
          const sleeper = await mysql.createConnection({
            host: '127.0.0.1',
            port: db.port,
            database: db.database,
            user: db.readWrite.user,
            password: db.readWrite.password,
          });
          return { pid: sleeper.threadId, run: sleeper.query(statement).catch(() => undefined), end: () => sleeper.end() };
        });
  return {
    stop: async () => {
      const { pid, run, end } = await done;
      await db.admin(spec.kind === 'postgres' ? `SELECT pg_cancel_backend(${pid})` : `KILL QUERY ${pid}`);
      await run;
      await end();
    },
  };
}

/** The conformance kit's sample calls every SQL connector shares; `describe` and `query` differ by dialect. */
export const sqlToolCalls = (describeTable: ConformanceToolCall, query: ConformanceToolCall): ConformanceToolCall[] => [
  { tool: 'list_schemas', args: {} },
  describeTable,
  query,
  { tool: 'explain', args: { sql: 'SELECT 1' } },
  { tool: 'slow_queries', args: { limit: 5, min_duration_ms: 1000 } },
  { tool: 'locks', args: {} },
  { tool: 'connections', args: {} },
];

/** Declares `suites` when the engine answers; otherwise one skipped test and a SKIP line saying why. */
export function whenReachable(kind: string, unreachable: string | null, what: string, suites: () => void): void {
  if (unreachable === null) return suites();
  console.log(`SKIP ${kind}: ${unreachable}`);
  describe.skip(`${kind} connector (${unreachable})`, () => it(what, () => undefined));
}
