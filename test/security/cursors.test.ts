/**
 * Pagination cursors are opaque and authenticated: a cursor is accepted only
 * by the organization and the list that issued it, unaltered; anything else is
 * 400 `invalid_cursor`. `limit` is a strict decimal integer from 1 to 200.
 * Pagination is shared, so each case runs on several list routes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../helpers/members.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

let server: TestServer;
let alice: Session;
let bob: Session;

/** Each list route with at least two items in both organizations, so `limit=1` has a next page. */
const ROUTES = ['/realms', '/api-keys', '/users', '/pipelines', '/roles'] as const;

async function seed(session: Session): Promise<void> {
  for (const name of ['one', 'two']) {
    expect((await server.request('POST', '/realms', { token: session.token, body: { name } })).status).toBe(201);
    expect((await server.request('POST', '/api-keys', { token: session.token, body: { name, permissions: ['realm:read'] } })).status).toBe(201);
    expect((await server.request('POST', '/pipelines', { token: session.token, body: { name } })).status).toBe(201);
  }
  await addMember(server, session, 'viewer');
}

beforeAll(async () => {
  server = await startTestServer();
  alice = await server.register('Cursor Org A');
  bob = await server.register('Cursor Org B');
  await seed(alice);
  await seed(bob);
});
afterAll(async () => server.stop());

async function firstCursor(session: Session, route: string): Promise<string> {
  const page = await server.request('GET', `${route}?limit=1`, { token: session.token });
  expect(page.status, page.text).toBe(200);
  expect(typeof page.body.next_cursor).toBe('string');
  return page.body.next_cursor as string;
}

async function expectInvalidCursor(session: Session, route: string, cursor: string): Promise<void> {
  const response = await server.request('GET', `${route}?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: session.token });
  expect(response.status, `${route} ${cursor}`).toBe(400);
  expect(response.body.error.code).toBe('invalid_cursor');
}

const b64 = (value: unknown, encoding: 'base64' | 'base64url') => Buffer.from(JSON.stringify(value)).toString(encoding);

describe('cursors are authenticated', () => {
  it.each(ROUTES)('%s: a cursor it issued pages on to the end', async (route) => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    let total = 0;
    do {
      const query: string = cursor === null ? '?limit=1' : `?limit=1&cursor=${encodeURIComponent(cursor)}`;
      const page = await server.request('GET', route + query, { token: alice.token });
      expect(page.status, page.text).toBe(200);
      for (const item of page.body.items as { id: string }[]) seen.add(item.id);
      total = page.body.total as number;
      cursor = page.body.next_cursor as string | null;
    } while (cursor !== null);
    expect(seen.size).toBe(total);
    expect(total).toBeGreaterThanOrEqual(2);
  });

  it.each(ROUTES)('%s: forged cursors (the old unsigned form, junk, empty mac) are 400 invalid_cursor', async (route) => {
    const forged = [
      b64({ v: 1, after: 'zzzz' }, 'base64'),
      b64({ v: 1, after: 'zzzz' }, 'base64url'),
      `${b64({ v: 1, after: 'zzzz' }, 'base64url')}.`,
      `${b64({ v: 1, after: 'zzzz' }, 'base64url')}.${'A'.repeat(43)}`,
      'garbage',
      '.',
    ];
    for (const cursor of forged) await expectInvalidCursor(alice, route, cursor);
  });

  it.each(ROUTES)('%s: a truncated or altered cursor is 400', async (route) => {
    const cursor = await firstCursor(alice, route);
    const [payload, mac] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { v: number; after: string };
    const tampered = [
      cursor.slice(0, -1),
      cursor.slice(0, cursor.length - 10),
      `${payload.slice(0, -1)}${payload.endsWith('A') ? 'B' : 'A'}.${mac}`,
      `${b64({ ...decoded, after: '' }, 'base64url')}.${mac}`,
      `${mac}.${payload}`,
      payload,
    ];
    for (const bad of tampered) await expectInvalidCursor(alice, route, bad);
  });

  it.each(ROUTES)('%s: a cursor from organization A is refused in organization B', async (route) => {
    const cursor = await firstCursor(alice, route);
    await expectInvalidCursor(bob, route, cursor);
    // and still works where it came from
    expect((await server.request('GET', `${route}?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: alice.token })).status).toBe(200);
  });

  it('a cursor from one list is refused on another list of the same organization', async () => {
    for (const [from, to] of [
      ['/realms', '/api-keys'],
      ['/api-keys', '/users'],
      ['/users', '/pipelines'],
      ['/pipelines', '/realms'],
      ['/roles', '/realms'],
    ] as const) {
      await expectInvalidCursor(alice, to, await firstCursor(alice, from));
    }
  });

  it("a cursor of one pipeline's runs is refused on the runs of a pipeline of another organization", async () => {
    const runsOf = async (session: Session): Promise<string> => {
      const pipeline = await server.request('POST', '/pipelines', { token: session.token, body: { name: `runs-${Math.random().toString(36).slice(2, 8)}` } });
      for (let i = 0; i < 2; i++) {
        expect((await server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: session.token, body: {} })).status).toBe(201);
      }
      return `/pipelines/${pipeline.body.id as string}/runs`;
    };
    const aliceRuns = await runsOf(alice);
    const bobRuns = await runsOf(bob);
    await expectInvalidCursor(bob, bobRuns, await firstCursor(alice, aliceRuns));
  });
});

describe('limit is a strict decimal integer in range', () => {
  const BAD = ['0x10', '1e1', ' 5', '5 ', '+5', '-1', '10.5', '0', '201', '', 'ten', '1_0', '٣'];
  it.each(['/realms', '/api-keys', '/users', '/pipelines'])('%s refuses each malformed limit with 400 validation_error', async (route) => {
    for (const limit of BAD) {
      const response = await server.request('GET', `${route}?limit=${encodeURIComponent(limit)}`, { token: alice.token });
      expect(response.status, `${route} limit=${JSON.stringify(limit)}`).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    for (const [limit, count] of [
      ['1', 1],
      ['2', 2],
      ['200', undefined],
    ] as const) {
      const response = await server.request('GET', `${route}?limit=${limit}`, { token: alice.token });
      expect(response.status).toBe(200);
      if (count !== undefined) expect(response.body.items).toHaveLength(count);
    }
  });

  it("a run's entries take after and limit the same strict way", async () => {
    const pipeline = await server.request('POST', '/pipelines', { token: alice.token, body: { name: 'entries-strict' } });
    const started = await server.request('POST', `/pipelines/${pipeline.body.id as string}/runs`, { token: alice.token, body: {} });
    const entries = `/pipelines/${pipeline.body.id as string}/runs/${started.body.run.id as string}/entries`;
    for (const query of ['after=0x1', 'after=1e0', 'after=-1', 'after=%201', 'limit=0', 'limit=1001', 'limit=1.5', 'limit=0x10']) {
      const response = await server.request('GET', `${entries}?${query}`, { token: alice.token });
      expectError(response, 400, 'validation_error');
    }
    expect((await server.request('GET', `${entries}?after=0&limit=1000`, { token: alice.token })).status).toBe(200);
  });

  it('every other integer query (graph search and expand, recommendations, event replay) is strict too', async () => {
    const created = await server.request('POST', '/graph/nodes', { token: alice.token, body: { nodes: [{ label: 'Svc', properties: { _key: 'a' } }] } });
    expect(created.status, created.text).toBe(200);
    const task = await server.request('POST', '/tasks', { token: alice.token, body: { name: 'strict-ints', trigger: { kind: 'webhook' } } });
    expect(task.status, task.text).toBe(201);
    const queries = [
      '/graph/search?query=a&limit=',
      '/graph/nodes/Svc%3Aa/expand?depth=',
      '/graph/nodes/Svc%3Aa/expand?limit=',
      '/task-recommendations?days=',
      '/task-recommendations?min_occurrences=',
      '/task-recommendations?limit=',
      `/tasks/${task.body.id as string}/runs/run_x/events?last_event_id=`,
    ];
    for (const query of queries) {
      for (const value of ['0x10', '1e1', '+2', '2.5', '-1', ' 2']) {
        const response = await server.request('GET', `${query}${encodeURIComponent(value)}`, { token: alice.token });
        expect(response.status, `${query}${value}`).toBe(400);
        expect(response.body.error.code, `${query}${value}`).toBe('validation_error');
      }
    }
    expect((await server.request('GET', '/graph/search?query=a&limit=2', { token: alice.token })).status).toBe(200);
    expect((await server.request('GET', '/graph/nodes/Svc%3Aa/expand?depth=2&limit=3', { token: alice.token })).status).toBe(200);
    expect((await server.request('GET', '/task-recommendations?days=7&min_occurrences=2&limit=5', { token: alice.token })).status).toBe(200);
  });

  it('documents limit as an integer from 1 to 200 in /openapi.json', async () => {
    const doc = await server.request('GET', '/openapi.json');
    const limit = (doc.body.paths['/api/v1/api-keys'].get.parameters as { name: string; schema: Record<string, unknown> }[]).find(
      (parameter) => parameter.name === 'limit',
    );
    expect(limit?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
    expect(limit?.schema).not.toHaveProperty('pattern');
  });
});

describe('cursors across restarts', () => {
  it('stay valid with the same JWT_SECRET and are refused under another', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-cursor-'));
    const secret = randomBytes(32).toString('hex');
    try {
      const first = await startTestServer({ JWT_SECRET: secret }, { dataDir });
      const session = await first.register('Restart Cursor Org');
      for (const name of ['r1', 'r2']) await first.request('POST', '/realms', { token: session.token, body: { name } });
      const cursor = (await first.request('GET', '/realms?limit=1', { token: session.token })).body.next_cursor as string;
      const login = { email: session.email, password: session.password };
      await first.stop();

      const same = await startTestServer({ JWT_SECRET: secret }, { dataDir });
      const token = (await same.request('POST', '/auth/login', { body: login })).body.token as string;
      expect((await same.request('GET', `/realms?limit=1&cursor=${encodeURIComponent(cursor)}`, { token })).status).toBe(200);
      await same.stop();

      const other = await startTestServer({ JWT_SECRET: randomBytes(32).toString('hex') }, { dataDir });
      const otherToken = (await other.request('POST', '/auth/login', { body: login })).body.token as string;
      const refused = await other.request('GET', `/realms?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: otherToken });
      expectError(refused, 400, 'invalid_cursor');
      await other.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
