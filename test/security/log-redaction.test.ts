/**
 * Path secrets (ingest tokens, trigger ids) and credential headers never
 * reach a log line; the route pattern and the redacted path do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import { createLogger } from '../../runtime/logger.js';
import type { Session } from '../helpers/server.js';
import { createPipeline, ingest, ndjson } from '../ingest/helpers.js';
import { createTask } from '../tasks/helpers.js';
import { hookPathOf, startLoggedServer, type LoggedServer } from './helpers.js';

interface RequestLine {
  readonly msg: string;
  readonly route: string | null;
  readonly path: string;
  readonly status: number;
  readonly method: string;
}

const requestLines = (server: LoggedServer): RequestLine[] =>
  server.lines.map((line) => JSON.parse(line) as RequestLine).filter((line) => line.msg === 'request');

for (const level of ['info', 'debug'] as const) {
  describe(`log lines at LOG_LEVEL=${level}`, () => {
    let server: LoggedServer;
    let owner: Session;
    const secrets: string[] = [];

    beforeAll(async () => {
      server = await startLoggedServer({ LOG_LEVEL: level });
      owner = await server.register();
      secrets.push(owner.token);
    });
    afterAll(async () => {
      await server.stop();
    });

    const expectNoSecret = () => {
      const all = server.lines.join('\n');
      for (const secret of secrets) expect(all).not.toContain(secret);
    };

    it('ingest tokens: good, bad signature, unknown and malformed tokens', async () => {
      const pipeline = await createPipeline(server, owner);
      const signedPipeline = await createPipeline(server, owner, { require_signature: true });
      secrets.push(pipeline.token, pipeline.signingSecret, signedPipeline.token, signedPipeline.signingSecret);
      const body = ndjson([{ label: 'a' }]);
      expect((await ingest(server, pipeline.token, body)).status).toBe(200);
      const wrongSignature = signHmac('not-the-secret-0123456789', Buffer.from(body));
      secrets.push(wrongSignature);
      expect((await ingest(server, signedPipeline.token, body, { 'x-service-signature': wrongSignature })).status).toBe(401);
      const unknown = 'ctx_' + 'Z'.repeat(32);
      const malformed = 'ctx_not-a-token-but-secret-looking';
      secrets.push(unknown, malformed);
      expect((await ingest(server, unknown, body)).status).toBe(401);
      expect((await ingest(server, malformed, body)).status).toBe(401);

      const lines = requestLines(server).filter((line) => line.route === '/api/v1/context/ingest/webhook/:token');
      expect(lines.map((line) => line.status).sort()).toEqual(level === 'info' ? [401, 401, 401] : [200, 401, 401, 401]);
      for (const line of lines) expect(line.path).toBe('/api/v1/context/ingest/webhook/[redacted]');
      expectNoSecret();
    });

    it('hook trigger ids: unsigned, mis-signed, signed, unknown trigger; the signature header never logged', async () => {
      const task = await createTask(server, owner, { name: `logged-${level}`, trigger: { kind: 'webhook' }, input_template: { instruction: 'x' } });
      const path = hookPathOf(task.trigger.url as string);
      const triggerId = path.split('/').pop() as string;
      secrets.push(triggerId, task.trigger.secret as string);
      const body = JSON.stringify({ ok: true });
      const unsigned = await server.request('POST', path, { body, headers: { 'content-type': 'application/json' } });
      expect(unsigned.status).toBe(401);
      const misSigned = await server.request('POST', path, {
        body,
        headers: { 'content-type': 'application/json', 'x-service-signature': signHmac('whsec_wrong', Buffer.from(body)) },
      });
      expect(misSigned.status).toBe(401);
      const signature = signHmac(task.trigger.secret as string, Buffer.from(body));
      secrets.push(signature);
      const valid = await server.request('POST', path, { body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } });
      expect(valid.status).toBe(202);
      const unknown = 'whk_' + 'Q'.repeat(32);
      secrets.push(unknown);
      expect((await server.request('POST', `/hooks/${unknown}`, { body, headers: { 'content-type': 'application/json' } })).status).toBe(404);

      const lines = requestLines(server).filter((line) => line.route === '/api/v1/hooks/:trigger_id');
      expect(lines.map((line) => line.status).sort()).toEqual(level === 'info' ? [401, 401, 404] : [202, 401, 401, 404]);
      for (const line of lines) expect(line.path).toBe('/api/v1/hooks/[redacted]');
      expectNoSecret();
    });

    it('unmatched paths keep only their first segment; the query string is never logged', async () => {
      const secret = 'whk_' + 'S'.repeat(32);
      secrets.push(secret, 'querysecretvalue');
      expect((await server.request('POST', `/hooks/${secret}/extra?token=querysecretvalue`, { body: '{}' })).status).toBe(404);
      expect((await server.request('GET', `/context/ingest/webhook/${secret}`)).status).toBe(405);
      const unmatched = requestLines(server).filter((line) => line.route === null);
      expect(unmatched.map((line) => line.path)).toEqual(['/api/v1/hooks/[redacted]/[redacted]', '/api/v1/context/[redacted]/[redacted]/[redacted]']);
      expectNoSecret();
    });

    it('routes without secret parameters log their path as is', async () => {
      const missing = await server.request('GET', '/tasks/tsk_missing', { token: owner.token });
      expect(missing.status).toBe(404);
      const line = requestLines(server).find((entry) => entry.route === '/api/v1/tasks/:id');
      expect(line).toMatchObject({ method: 'GET', path: '/api/v1/tasks/tsk_missing', status: 404 });
      expectNoSecret();
    });
  });
}

describe('header maps in log lines', () => {
  it('credential and signature headers are redacted by name, the others kept', () => {
    const lines: string[] = [];
    const logger = createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
    logger.info(
      {
        headers: {
          authorization: 'Bearer secret-1',
          cookie: 'sid=secret-2',
          'x-service-signature': 'sha256=secret-3',
          'x-hub-signature-256': 'sha256=secret-4',
          'x-slack-signature': 'v0=secret-5',
          'x-gitlab-token': 'secret-6',
          'content-type': 'application/json',
          'x-github-event': 'push',
        },
      },
      'delivery',
    );
    expect(lines).toHaveLength(1);
    const logged = JSON.parse(lines[0] as string) as { headers: Record<string, string> };
    expect(logged.headers).toEqual({
      authorization: '[redacted]',
      cookie: '[redacted]',
      'x-service-signature': '[redacted]',
      'x-hub-signature-256': '[redacted]',
      'x-slack-signature': '[redacted]',
      'x-gitlab-token': '[redacted]',
      'content-type': 'application/json',
      'x-github-event': 'push',
    });
    expect(lines[0]).not.toMatch(/secret-\d/);
  });
});
