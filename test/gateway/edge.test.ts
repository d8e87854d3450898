/** The HTTP edge: envelope, routing errors, auth errors, body limits, pagination, idempotency, faults. */
import { SignJWT } from 'jose';
import { rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { asOrgId } from '../../runtime/store/types.js';
import { withTestServer, type Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const SECRET = 'edge-test-secret-0123456789abcdef0123456789';

/** Sends a body with Transfer-Encoding: chunked (no Content-Length) and returns status + body. */
function postChunked(url: string, token: string, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // the server may close the socket right after its 413 while we are still writing
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/** an HS256 token as the service issues them: this organization and user, signed with `secret` (the server's by default), valid an hour */
function signToken(claims: { org: string; user: string; secret?: string; issuedAt?: number; expiresAt?: number | string }): Promise<string> {
  return new SignJWT({ org: claims.org })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.user)
    .setIssuer('agent-context-service')
    .setIssuedAt(claims.issuedAt)
    .setExpirationTime(claims.expiresAt ?? '1h')
    .sign(new TextEncoder().encode(claims.secret ?? SECRET));
}

describe('HTTP edge', () => {
  const ctx = useTwoOrgs({ JWT_SECRET: SECRET });

  describe('routing and envelope', () => {
    it('answers unknown routes with 404 in the envelope', async () => {
      for (const path of ['/nope', '/realms/x/y/z']) {
        const response = await ctx.server.request('GET', path, { token: ctx.alice.token });
        expectError(response, 404, 'not_found');
        expect(typeof response.body.error.message).toBe('string');
        expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
      }
      const outside = await fetch(ctx.server.url.replace('/api/v1', '/other'));
      expect(outside.status).toBe(404);
      expect((await outside.json()).error.code).toBe('not_found');
    });

    it('answers a known path with a wrong method with 405 and Allow', async () => {
      const response = await ctx.server.request('PUT', '/realms', { token: ctx.alice.token, body: {} });
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe('GET, POST');
    });

    it.each([
      ['malformed JSON', '{"name": "x",', 'application/json', 400, 'invalid_json'],
      ['a non-JSON content type', 'name=x', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
    ])('answers %s with the envelope', async (_what, body, contentType, status, code) => {
      const response = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body, headers: { 'content-type': contentType } });
      expectError(response, status, code);
    });

    it('lists every failing path of a body in details', async () => {
      const response = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'BAD', color: 'nope' } });
      expect(response.status).toBe(400);
      expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['color', 'name']);
    });

    it('echoes a request id, or makes one', async () => {
      const given = await ctx.server.request('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
      expect(given.headers.get('x-request-id')).toBe('trace-123');
      const made = await ctx.server.request('GET', '/health');
      expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
      const again = await ctx.server.request('GET', '/health');
      expect(again.headers.get('x-request-id')).not.toBe(made.headers.get('x-request-id'));
    });
  });

  describe('authentication', () => {
    it('answers 401 without credentials, with a malformed header, and with an unknown token', async () => {
      const cases: [Record<string, string>, string][] = [
        [{}, 'unauthorized'],
        [{ authorization: 'Basic abc' }, 'unauthorized'],
        [{ authorization: 'Bearer not-a-jwt' }, 'unauthorized'],
        [{ authorization: 'Bearer sk_unknownkey0000000000000000000000000000000' }, 'unauthorized'],
      ];
      for (const [headers, code] of cases) {
        const response = await ctx.server.request('GET', '/realms', { headers });
        expect(response.status).toBe(401);
        expect(response.body.error.code).toBe(code);
      }
    });

    it('rejects a token signed with another secret, and an expired one', async () => {
      const forged = await signToken({ org: ctx.alice.organization.id, user: ctx.alice.user.id, secret: 'another-secret-0123456789abcdef0123456789' });
      const forgedResponse = await ctx.server.request('GET', '/realms', { token: forged });
      expectError(forgedResponse, 401, 'unauthorized');

      const now = Math.floor(Date.now() / 1000);
      const expired = await signToken({ org: ctx.alice.organization.id, user: ctx.alice.user.id, issuedAt: now - 7200, expiresAt: now - 3600 });
      const expiredResponse = await ctx.server.request('GET', '/realms', { token: expired });
      expectError(expiredResponse, 401, 'token_expired');
    });

    it('rejects a token naming an organization the user does not belong to', async () => {
      const crossed = await signToken({ org: ctx.bob.organization.id, user: ctx.alice.user.id });
      const response = await ctx.server.request('GET', '/realms', { token: crossed });
      expect(response.status).toBe(401);
    });

    it('logs in, and refuses a wrong password or unknown email the same way', async () => {
      const ok = await ctx.server.request('POST', '/auth/login', { body: { email: ctx.alice.email, password: ctx.alice.password } });
      expect(ok.status).toBe(200);
      expect(ok.body.user).toEqual({ id: ctx.alice.user.id, email: ctx.alice.email, role: 'owner' });
      expect(Date.parse(ok.body.expires_at)).toBeGreaterThan(Date.now());
      const me = await ctx.server.request('GET', '/auth/me', { token: ok.body.token });
      expect(me.body).toMatchObject({ id: ctx.alice.user.id, email: ctx.alice.email, role: 'owner', kind: 'user' });
      for (const body of [
        { email: ctx.alice.email, password: 'wrong password' },
        { email: 'nobody@example.test', password: 'whatever1' },
      ]) {
        const response = await ctx.server.request('POST', '/auth/login', { body });
        expectError(response, 401, 'invalid_credentials');
      }
    });

    it('validates registration and refuses a taken email', async () => {
      const weak = await ctx.server.request('POST', '/auth/register', { body: { email: 'new@example.test', password: 'short', organization_name: 'X' } });
      expect(weak.status).toBe(400);
      const badEmail = await ctx.server.request('POST', '/auth/register', { body: { email: 'not-an-email', password: 'long enough', organization_name: 'X' } });
      expect(badEmail.status).toBe(400);
      const taken = await ctx.server.request('POST', '/auth/register', {
        body: { email: ctx.alice.email, password: 'some other password', organization_name: 'X' },
      });
      expectError(taken, 409, 'conflict');
    });
  });

  describe('body limits', () => {
    it('answers 413 from Content-Length before reading', async () => {
      const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1_100_000) });
      const response = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: big, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(413);
      expect(response.body.error).toMatchObject({ code: 'payload_too_large', details: { limit_bytes: 1_048_576 } });
    });

    it('answers 413 while reading a chunked body that crosses the limit', async () => {
      const chunk = Buffer.alloc(256 * 1024, 'a');
      const response = await postChunked(`${ctx.server.url}/realms`, ctx.alice.token, [chunk, chunk, chunk, chunk, chunk, chunk]);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body).error.code).toBe('payload_too_large');
      // the server is still serving
      expect((await ctx.server.request('GET', '/realms', { token: ctx.alice.token })).status).toBe(200);
    });
  });

  describe('pagination', () => {
    let session: Session;
    beforeAll(async () => {
      session = await ctx.server.register();
      for (let i = 0; i < 120; i++) {
        await ctx.server.request('POST', '/realms', { token: session.token, body: { name: `r-${String(i).padStart(3, '0')}` } });
      }
    });

    it('defaults to 50, pages with a stable cursor to the end, and counts the total', async () => {
      const names: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`;
        const page = await ctx.server.request('GET', `/realms${query}`, { token: session.token });
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(121);
        expect(page.body.items.length).toBe(pages < 2 ? 50 : 21);
        names.push(...page.body.items.map((realm: { name: string }) => realm.name));
        cursor = page.body.next_cursor;
        pages += 1;
      } while (cursor !== null);
      expect(pages).toBe(3);
      expect(new Set(names).size).toBe(121);
    });

    it('accepts limit up to 200 and refuses more, zero or junk', async () => {
      const max = await ctx.server.request('GET', '/realms?limit=200', { token: session.token });
      expect(max.body.items.length).toBe(121);
      expect(max.body.next_cursor).toBeNull();
      for (const limit of ['201', '0', '-1', 'ten', '1.5']) {
        const response = await ctx.server.request('GET', `/realms?limit=${limit}`, { token: session.token });
        expectError(response, 400, 'validation_error');
      }
    });

    it('refuses a cursor it did not issue', async () => {
      const response = await ctx.server.request('GET', '/realms?cursor=garbage', { token: session.token });
      expectError(response, 400, 'invalid_cursor');
    });

    it('keeps a cursor valid when earlier items are deleted', async () => {
      const first = await ctx.server.request('GET', '/realms?limit=10', { token: session.token });
      const next = first.body.next_cursor as string;
      await ctx.server.request('DELETE', `/realms/${first.body.items[5].id}`, { token: session.token });
      const second = await ctx.server.request('GET', `/realms?limit=10&cursor=${encodeURIComponent(next)}`, { token: session.token });
      expect(second.body.items[0].name).toBe('r-009');
    });
  });

  describe('Idempotency-Key', () => {
    it('answers a retry with the original resource and creates nothing', async () => {
      const session = await ctx.server.register();
      const send = () => ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'once' }, headers: { 'idempotency-key': 'key-1' } });
      const first = await send();
      const second = await send();
      expect(first.status).toBe(201);
      expectStatus(second, 201).toEqual(first.body);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      const list = await ctx.server.request('GET', '/realms', { token: session.token });
      expect(list.body.total).toBe(2);
    });

    it('runs concurrent retries once', async () => {
      const session = await ctx.server.register();
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'race' }, headers: { 'idempotency-key': 'race-key' } }),
        ),
      );
      const created = responses.filter((response) => response.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const response of responses) {
        if (response.status !== 201) expect(response.body.error.code).toBe('idempotency_in_progress');
        else expect(response.body.id).toBe(created[0]?.body.id);
      }
      expect((await ctx.server.request('GET', '/realms', { token: session.token })).body.total).toBe(2);
    });

    it('refuses the same key with a different body', async () => {
      const session = await ctx.server.register();
      await ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'a1' }, headers: { 'idempotency-key': 'k' } });
      const reused = await ctx.server.request('POST', '/realms', { token: session.token, body: { name: 'a2' }, headers: { 'idempotency-key': 'k' } });
      expectError(reused, 409, 'idempotency_key_reused');
    });

    it('scopes keys to the organization and releases them when the request fails', async () => {
      const one = await ctx.server.register();
      const two = await ctx.server.register();
      const a = await ctx.server.request('POST', '/realms', { token: one.token, body: { name: 'shared' }, headers: { 'idempotency-key': 'same' } });
      const b = await ctx.server.request('POST', '/realms', { token: two.token, body: { name: 'shared' }, headers: { 'idempotency-key': 'same' } });
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.body.id).not.toBe(a.body.id);

      const bad = await ctx.server.request('POST', '/realms', { token: one.token, body: { name: 'BAD' }, headers: { 'idempotency-key': 'retry-me' } });
      expect(bad.status).toBe(400);
      // the failed request released the key: a corrected body under the same key is a new request, not a reuse
      const fixed = await ctx.server.request('POST', '/realms', { token: one.token, body: { name: 'good' }, headers: { 'idempotency-key': 'retry-me' } });
      expect(fixed.status).toBe(201);
      expect(fixed.body.name).toBe('good');
    });

    it('keeps stored responses sealed, so a secret answered once is not readable at rest', async () => {
      const session = await ctx.server.register();
      const created = await ctx.server.request('POST', '/api-keys', {
        token: session.token,
        body: { name: 'ci', permissions: ['realm:read'] },
        headers: { 'idempotency-key': 'sealed-1' },
      });
      expect(created.status).toBe(201);
      const key = created.body.key as string;
      const replay = await ctx.server.request('POST', '/api-keys', {
        token: session.token,
        body: { name: 'ci', permissions: ['realm:read'] },
        headers: { 'idempotency-key': 'sealed-1' },
      });
      expect(replay.body.key).toBe(key);
      const stored = await ctx.server.service.services.collections.idempotency.findAll(asOrgId(session.organization.id), { key: 'sealed-1' });
      expect(stored.length).toBe(1);
      expect(stored[0]?.response_body?.startsWith('v1.')).toBe(true);
      expect(stored[0]?.response_body).not.toContain(key);
      expect(stored[0]?.response_body).not.toContain(key.slice(3, 20));
    });

    it('refuses a malformed key', async () => {
      const response = await ctx.server.request('POST', '/realms', {
        token: ctx.alice.token,
        body: { name: 'k' },
        headers: { 'idempotency-key': 'x'.repeat(300) },
      });
      expect(response.status).toBe(400);
    });
  });

  describe('health and OpenAPI', () => {
    it('reports features and dependency statuses', async () => {
      const response = await ctx.server.request('GET', '/health');
      expect(response.status).toBe(200);
      expect(response.body.features).toEqual({ rag: false, workers: false, orchestrator: false, voice: false, policies: false });
      expect(response.body.dependencies.metadata).toBe('ok');
      expect(response.body.dependencies.bus).toBe('ok');
      expect(response.body.dependencies.llm).toBe('unconfigured');
      // nothing is cached across processes: every cache lives in this one
      expect(response.body.dependencies.cache).toBe('none');
      expect(response.body.engines.cache).toBe('in-process');
      expect(Object.keys(response.body.dependencies).sort()).toEqual(['bus', 'cache', 'context_tables', 'graph', 'llm', 'metadata']);
      expect(response.body.status).toBe('ok');
    });

    it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
      const response = await ctx.server.request('GET', '/openapi.json');
      expect(response.status).toBe(200);
      expect(response.body.openapi).toBe('3.1.0');
      const post = response.body.paths['/api/v1/realms'].post;
      expect(post.requestBody.content['application/json'].schema.properties.name.pattern).toBe('^[a-z0-9_-]+$');
      expect(post.parameters.map((parameter: { name: string }) => parameter.name)).toContain('Idempotency-Key');
      expect(post['x-permission']).toBe('realm:manage');
      const list = response.body.paths['/api/v1/realms'].get;
      expect(list.parameters.find((parameter: { name: string }) => parameter.name === 'limit').schema.maximum).toBe(200);
      expect(response.body.paths['/api/v1/realms/{id}'].patch.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
    });

    it('documents every route of the table, each once', async () => {
      const document = (await ctx.server.request('GET', '/openapi.json')).body;
      const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      );
      const served = ctx.server.service.routes.map((route) => `${route.method} /api/v1${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
      expect(documented.sort()).toEqual(served.sort());
      expect(new Set(documented).size).toBe(documented.length);
      const operationIds = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((operations) =>
        Object.values(operations).map((operation) => operation.operationId),
      );
      expect(new Set(operationIds).size).toBe(served.length);
    });
  });
});

describe('health with a message bus', () => {
  it('probes NATS for real: down when nothing listens', async () => {
    await withTestServer({ NATS_URL: 'nats://127.0.0.1:1' }, async (server) => {
      const response = await server.request('GET', '/health');
      expect(response.body.dependencies.bus).toBe('down');
      expect(response.body.status).toBe('degraded');
      expect(response.body.engines.bus).toBe('nats');
    });
  });

  it('probes NATS for real: ok against the local server', async () => {
    await withTestServer({ NATS_URL: 'nats://127.0.0.1:4222' }, async (server) => {
      const response = await server.request('GET', '/health');
      if (response.body.dependencies.bus !== 'ok') {
        console.log('SKIP NATS health probe: no NATS server answers on 127.0.0.1:4222');
        return;
      }
      expect(response.body.status).toBe('ok');
    });
  });
});

describe('health follows its dependencies', () => {
  it('is degraded once the context tables file or the graph folder is gone under the running server', async () => {
    await withTestServer({}, async (server) => {
      expect((await server.request('GET', '/health')).body.status).toBe('ok');
      rmSync(join(server.dataDir, 'context.duckdb'), { force: true });
      const withoutTables = await server.request('GET', '/health');
      expect(withoutTables.status).toBe(200);
      expect(withoutTables.body.dependencies.context_tables).toBe('down');
      expect(withoutTables.body.status).toBe('degraded');
      rmSync(join(server.dataDir, 'graph'), { recursive: true, force: true });
      const withoutGraph = await server.request('GET', '/health');
      expect(withoutGraph.body.dependencies.graph).toBe('down');
      expect(withoutGraph.body.status).toBe('degraded');
    });
  });
});

describe('unexpected failures', () => {
  it('answers 500 in the envelope with the request id and keeps serving', async () => {
    await withTestServer({}, async (server) => {
      const session = await server.register();
      // a real fault: the metadata store goes away under the running server
      await server.service.metadataStore.close();
      const response = await server.request('GET', '/realms', { token: session.token, headers: { 'x-request-id': 'req-500' } });
      expectError(response, 500, 'internal_error');
      expect(response.body.error.message).toContain('req-500');
      const health = await server.request('GET', '/health');
      expect(health.status).toBe(503);
      expect(health.body.dependencies.metadata).toBe('down');
    });
  });
});
