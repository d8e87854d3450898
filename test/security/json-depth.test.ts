/**
 * Deeply nested JSON is refused at the edge (400 payload_too_deep) before
 * anything parses or walks it, on every kind of route, and the event loop
 * stays free: /health answers right after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { oneOrg } from '../helpers/orgs.js';
import { withTestServer, type Session, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

/** `depth` levels of arrays, objects or both, as raw JSON text (JSON.stringify would recurse). */
function nested(depth: number, kind: 'array' | 'object' | 'mixed'): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let level = 0; level < depth; level++) {
    const asObject = kind === 'object' || (kind === 'mixed' && level % 2 === 1);
    open.push(asObject ? '{"a":' : '[');
    close.push(asObject ? '}' : ']');
  }
  return open.join('') + '1' + close.reverse().join('');
}

describe('JSON nesting bound at the edge', () => {
  let server: TestServer, owner: Session;
  beforeAll(async () => ({ server, owner } = await oneOrg()));
  afterAll(async () => server.stop());

  const send = (method: string, path: string, body: string) =>
    server.request(method, path, { token: owner.token, body, headers: { 'content-type': 'application/json' } });

  /** each route with where its deep value goes */
  const routes: readonly { method: string; path: string; wrap: (deep: string) => string }[] = [
    { method: 'POST', path: '/graph/cypher', wrap: (deep) => `{"query":"RETURN $p AS p","params":{"p":${deep}}}` },
    { method: 'POST', path: '/tasks', wrap: (deep) => `{"name":"deep","trigger":{"kind":"manual"},"input":${deep}}` },
    { method: 'PATCH', path: '/settings', wrap: (deep) => `{"extra":${deep}}` },
    { method: 'POST', path: '/memory', wrap: (deep) => `{"content":"x","metadata":${deep}}` },
    { method: 'POST', path: '/webhooks', wrap: (deep) => `{"url":"http://127.0.0.1:9/x","events":${deep}}` },
  ];

  for (const depth of [1_000, 10_000, 100_000]) {
    for (const kind of ['array', 'object', 'mixed'] as const) {
      it(`${depth} levels of ${kind}s: 400 payload_too_deep on every route, /health answers right after`, async () => {
        const deep = nested(depth, kind);
        for (const { method, path, wrap } of routes) {
          const response = await send(method, path, wrap(deep));
          expect({ path, status: response.status, code: response.body?.error?.code }).toEqual({ path, status: 400, code: 'payload_too_deep' });
          expect(response.body.error.details).toEqual({ max_depth: 64 });
          const health = await server.request('GET', '/health');
          expect(health.status).toBe(200);
        }
      });
    }
  }

  it('the whole body is the deep value: a top-level deep array is refused the same way', async () => {
    const response = await send('POST', '/tasks', nested(10_000, 'array'));
    expectError(response, 400, 'payload_too_deep');
  });

  it('brackets inside strings do not count; 64 levels pass the bound and reach validation', async () => {
    const text = '['.repeat(5000) + '{'.repeat(5000);
    const inString = await send('PATCH', '/settings', JSON.stringify({ llm_model: text.slice(0, 200), note: text }));
    expect(inString.body?.error?.code).not.toBe('payload_too_deep');
    // 63 levels inside the 1 of the body object: at the bound, so zod answers (validation), not the edge
    const atBound = await send('POST', '/tasks', `{"name":"bound","trigger":{"kind":"manual"},"input":${nested(63, 'mixed')}}`);
    expect(atBound.body?.error?.code).not.toBe('payload_too_deep');
    const overBound = await send('POST', '/tasks', `{"name":"bound","trigger":{"kind":"manual"},"input":${nested(64, 'mixed')}}`);
    expectError(overBound, 400, 'payload_too_deep');
  });

  it('an escaped quote inside a string does not end the string for the scan', async () => {
    const tricky = `{"name":"q\\\\\\"[[[[","trigger":{"kind":"manual"},"input":${nested(100, 'array')}}`;
    const response = await send('POST', '/tasks', tricky);
    expectError(response, 400, 'payload_too_deep');
  });

  it('an anonymous caller is refused 401 first: the bound runs after authentication', async () => {
    const response = await server.request('POST', '/tasks', { body: nested(10_000, 'array'), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(401);
  });

  it('a body over the size limit is still 413', async () => {
    const response = await send('POST', '/tasks', '['.repeat(2 * 1024 * 1024));
    expectError(response, 413, 'payload_too_large');
  });

  it('raw JSON routes are bounded too: POST /hooks/:trigger_id and POST /mcp', async () => {
    const task = await server.request('POST', '/tasks', {
      token: owner.token,
      body: { name: 'deep hook', trigger: { kind: 'webhook' }, input_template: { instruction: 'x' } },
    });
    expect(task.status).toBe(201);
    const hookPath = new URL(task.body.trigger.url as string).pathname.replace('/api/v1', '');
    const hook = await server.request('POST', hookPath, { body: nested(10_000, 'object'), headers: { 'content-type': 'application/json' } });
    expectError(hook, 400, 'payload_too_deep');
    const deliveries = await server.request('GET', `/tasks/${task.body.id}/deliveries`, { token: owner.token });
    expect(deliveries.body.items).toEqual([]);
    const mcp = await send('POST', '/mcp', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested(10_000, 'mixed')}}`);
    expectError(mcp, 400, 'payload_too_deep');
  });
});

describe('signed hook bodies the edge cannot see as JSON', () => {
  let server: TestServer, owner: Session;
  beforeAll(async () => ({ server, owner } = await oneOrg()));
  afterAll(async () => server.stop());

  const hookTask = async (name: string) => {
    const task = await server.request('POST', '/tasks', {
      token: owner.token,
      body: { name, trigger: { kind: 'webhook' }, input_template: { instruction: 'x' } },
    });
    expect(task.status).toBe(201);
    return {
      id: task.body.id as string,
      path: new URL(task.body.trigger.url as string).pathname.replace('/api/v1', ''),
      secret: task.body.trigger.secret as string,
    };
  };

  it('no content type (read as JSON): 400 payload_too_deep, no run', async () => {
    const task = await hookTask('no content type');
    const body = nested(10_000, 'mixed');
    // a Buffer: fetch adds no content type (a string would go as text/plain)
    const hit = await server.request('POST', task.path, {
      body: Buffer.from(body),
      headers: { 'x-service-signature': signHmac(task.secret, Buffer.from(body)) },
    });
    expectError(hit, 400, 'payload_too_deep');
    const deliveries = await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token });
    expect(deliveries.body.items.map((item: { status: string; run_id: string | null }) => [item.status, item.run_id])).toEqual([['rejected', null]]);
    expect((await server.request('GET', '/health')).status).toBe(200);
  });

  it('a form payload nesting too deep stays the form text (202), a shallow one is read as JSON', async () => {
    const task = await hookTask('form payload');
    for (const payload of [nested(10_000, 'array'), '{"ok":[1,2]}']) {
      const body = `payload=${encodeURIComponent(payload)}`;
      const hit = await server.request('POST', task.path, {
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-service-signature': signHmac(task.secret, Buffer.from(body)) },
      });
      expect(hit.status).toBe(202);
    }
  });
});

describe('MAX_JSON_DEPTH', () => {
  it('is configurable: 8 refuses 9 levels and lets 8 through', async () => {
    await withTestServer({ MAX_JSON_DEPTH: '8' }, async (server) => {
      const owner = await server.register();
      const send = (body: string) => server.request('PATCH', '/settings', { token: owner.token, body, headers: { 'content-type': 'application/json' } });
      const over = await send(`{"x":${nested(8, 'array')}}`);
      expect(over.status).toBe(400);
      expect(over.body.error).toMatchObject({ code: 'payload_too_deep', details: { max_depth: 8 } });
      const at = await send(`{"x":${nested(7, 'array')}}`);
      expect(at.body?.error?.code).not.toBe('payload_too_deep');
    });
  });
});
