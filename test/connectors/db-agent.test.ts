/**
 * "What is slow on the orders database?": a chat run whose fake LLM calls
 * `postgres.slow_queries` on a postgres source (the machine's real server,
 * a scratch orders database with a statement running long) and answers from
 * it. Reads need no approval: the run never asks for one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { execute, send, startFakeLlmServer, wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { createPostgresScratch, postgresUnreachable, type ScratchDatabase } from './sql-scratch.js';

const unreachable = await postgresUnreachable();
if (unreachable !== null) console.log(`SKIP postgres: ${unreachable}`);

describe.skipIf(unreachable !== null)('an agent answers "what is slow on the orders database" from slow_queries', () => {
  let server: TestServer;
  let llm: FakeLlmServer;
  let db: ScratchDatabase;
  let org: ChatOrg;
  let sleeper: pg.Client;
  let sleeping: Promise<unknown>;

  beforeAll(async () => {
    db = await createPostgresScratch();
    llm = await startFakeLlmServer();
    server = await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY });
    // writes would wait for a person: a read must not
    org = await wireOrganization(server, llm, { approvalWrite: 'ask' });
    const created = await server.request('POST', '/sources', {
      token: org.session.token,
      body: {
        name: 'orders',
        connector: 'postgres',
        config: { url: `postgres://${db.readWrite.user}:${db.readWrite.password}@127.0.0.1:${db.port}/${db.database}?sslmode=disable` },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.config.url).toBe('********');
    expect((await server.request('GET', `/sources/${created.body.id}/test`, { token: org.session.token })).status).toBe(200);
    // the slow statement, run by the source's own login so its text is visible to it
    sleeper = new pg.Client({ host: '127.0.0.1', port: db.port, database: db.database, user: db.readWrite.user, password: db.readWrite.password });
    await sleeper.connect();
    sleeping = sleeper.query('SELECT pg_sleep(30) /* nightly orders report */').catch(() => undefined);
  });
  afterAll(async () => {
    await db?.admin(
      `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = '${db.readWrite.user}' AND query LIKE '%nightly orders report%' AND pid <> pg_backend_pid()`,
    );
    await sleeping;
    await sleeper?.end();
    await server?.stop();
    await llm?.close();
    await db?.drop();
  });

  it('calls slow_queries, sees the long statement, answers, and asks for no approval', async () => {
    let running: any[] = [];
    // the statement shows as running once it has run for min_duration_ms; the model is asked again until then
    for (let attempt = 0; attempt < 30 && running.length === 0; attempt++) {
      llm.script([
        { tool_calls: [{ id: `s${attempt}`, ...execute('postgres.slow_queries', { min_duration_ms: 200 }) }] },
        {
          text: 'The nightly orders report has been running pg_sleep for a while; pg_stat_statements is not installed, so there are no historical statistics.',
        },
      ]);
      const stream = await send(server, org, 'what is slow on the orders database?');
      await stream.ended;
      expect(stream.events.some((event) => event.event === 'approval_required')).toBe(false);
      const result = stream.events.find((event) => event.event === 'tool_result')?.data.result;
      expect(result?.error, JSON.stringify(result)).toBeUndefined();
      expect(result.result.statistics).toMatchObject({ source: 'pg_stat_statements' });
      running = (result.result.running as any[]).filter((r) => String(r.query).includes('nightly orders report'));
      if (running.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      else expect(stream.events.at(-1)?.event).not.toBe('error');
    }
    expect(running[0]).toMatchObject({ user: db.readWrite.user, database: db.database, state: 'active' });
    // the model got the tool's answer in its next request
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain('nightly orders report');
  });
});
