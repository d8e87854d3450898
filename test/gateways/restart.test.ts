/**
 * Gateway dispatches survive a restart: a task run dispatched to a webhook
 * engine when the service stops is picked up at the next start (same data
 * directory and JWT_SECRET), and the engine's signed callback after the
 * restart completes the dispatch and the task run.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTask, runEnds } from '../tasks/helpers.js';

const SECRET = 'engine-shared-signing-secret-02';
const WHSEC = 'whsec_' + Buffer.from(SECRET).toString('base64');

describe('gateway dispatches across a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-restart-'));
  const env = { JWT_SECRET: randomBytes(32).toString('hex') };
  const received: string[] = [];
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST') received.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end('{"accepted":true}');
    });
  });
  let server: TestServer | null = null;
  afterAll(async () => {
    await server?.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a task run waiting for its webhook callback is resumed after a restart and the callback completes it', async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/engine`;
    server = await startTestServer(env, { dataDir });
    const owner = await server.register();
    const gateway = await server.request('POST', '/gateways', {
      token: owner.token,
      body: { name: 'hook-engine', engine_type: 'webhook', base_url: url, api_key: SECRET },
    });
    expect(gateway.status).toBe(201);
    const task = await createTask(server, owner, { name: 'on the engine', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, gateway: 'hook-engine' });
    const fire = await server.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const payload = JSON.parse(await eventually(() => received[0], { what: 'the engine to receive the dispatch' }));
    expect(payload).toMatchObject({ workflow_run_id: runId, step_id: task.id });

    await server.stop();
    server = await startTestServer(env, { dataDir });
    const run = await server.request('GET', `/tasks/${task.id as string}/runs/${runId}`, { token: owner.token });
    expect(run.body.status).toBe('running');

    const body = JSON.stringify({ status: 'succeeded', output: { done: true } });
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'cb-restart',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(WHSEC).sign('cb-restart', now, body),
    };
    const settled = await server.request('POST', `/gateways/callbacks/${payload.dispatch_id as string}`, { body, headers });
    expect(settled.status).toBe(200);
    expect((await runEnds(server, owner, task.id, runId)).status).toBe('succeeded');
    // the restart resumed the same dispatch (a repeat, if any, carries the same dispatch id for the engine to deduplicate)
    expect(new Set(received.map((sent) => JSON.parse(sent).dispatch_id as string))).toEqual(new Set([payload.dispatch_id]));
  });
});
