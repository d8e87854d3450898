/** Outbound deliveries survive a restart: queued, not lost. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signIn, startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver } from '../fakes/webhook-receiver/server.js';
import { createWebhook, waitForDelivery } from './helpers.js';

const SECRET = 'restart-suite-secret-00001';

describe('outbound deliveries across a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-webhook-restart-'));
  // the same root secret: webhook secrets are sealed with a key derived from it
  const env = { JWT_SECRET: randomBytes(32).toString('hex'), WEBHOOK_RETRY_BASE_MS: '1500' };
  const servers: TestServer[] = [];
  const dirs = [dataDir];
  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a delivery waiting for its retry when the server stops is sent by the next process', async () => {
    const receiver = await startWebhookReceiver([SECRET]);
    try {
      const first = await startTestServer(env, { dataDir });
      servers.push(first);
      const owner = await first.register();
      const webhook = await createWebhook(first, owner, { name: 'survivor', url: receiver.url, secret: SECRET, retries: 3 });
      receiver.failNext(1, 503);
      const sent = await first.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
      expect(sent.body).toMatchObject({ status: 'queued', attempts: [{ n: 1, status: 503 }] });
      await first.stop();
      // the stopped process made no further attempt
      expect(receiver.requests).toHaveLength(1);

      const second = await startTestServer(env, { dataDir });
      servers.push(second);
      const session = await signIn(second, owner);
      const delivery = await waitForDelivery(second, session, webhook.id, sent.body.id);
      expect(delivery.status).toBe('delivered');
      expect(delivery.attempts.map((attempt: any) => attempt.status)).toEqual([503, 200]);
      expect(receiver.requests).toHaveLength(2);
      expect(receiver.requests[1]!.verified).toBe(true);
      expect(receiver.requests[1]!.headers['webhook-id']).toBe(sent.body.id);
    } finally {
      await receiver.close();
    }
  });

  it('a delivery in flight when the process is cut off is sent again by the next one (same webhook-id)', async () => {
    const receiver = await startWebhookReceiver([SECRET]);
    const cutDir = mkdtempSync(join(tmpdir(), 'svc-webhook-inflight-'));
    dirs.push(cutDir);
    try {
      // no grace: the stop cuts the attempt mid-request, as a crash would
      const first = await startTestServer({ ...env, SHUTDOWN_GRACE_SECS: '0' }, { dataDir: cutDir });
      servers.push(first);
      const owner = await first.register();
      const webhook = await createWebhook(first, owner, { name: 'cut', url: receiver.url, secret: SECRET, retries: 3 });
      const arrived = receiver.holdNext();
      const { services } = first.service;
      const stored = await services.webhooks.find(owner.organization.id as never, webhook.id);
      const delivery = await services.webhooks.send(owner.organization.id as never, stored!, {
        event: 'agent.send',
        payload: { n: 1 },
        runId: null,
        createdBy: owner.user.id,
      });
      await arrived;
      await first.stop();
      receiver.release();

      const second = await startTestServer(env, { dataDir: cutDir });
      servers.push(second);
      const session = await signIn(second, owner);
      const done = await waitForDelivery(second, session, webhook.id, delivery.id);
      // the cut attempt left no log entry; the resumed one is attempt 1
      expect(done.status).toBe('delivered');
      expect(done.attempts.map((attempt: any) => [attempt.n, attempt.status])).toEqual([[1, 200]]);
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0]!).toMatchObject({ verified: true, json: { n: 1 } });
      expect(receiver.requests[0]!.headers['webhook-id']).toBe(delivery.id);
    } finally {
      await receiver.close();
    }
  });
});
