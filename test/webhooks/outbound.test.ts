/** Outbound webhooks end to end: the real server delivers to a local receiver that verifies both signature schemes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { Session, TestServer } from '../helpers/server.js';
import { addMember } from '../helpers/members.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver/server.js';
import { createWebhook, waitForDelivery } from './helpers.js';
import { eventually } from '../helpers/eventually.js';
import { expectError } from '../helpers/expect-status.js';

const SECRET = 'receiver-shared-secret-0001';

describe('outbound webhooks', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let owner: Session;

  beforeAll(async () => {
    receiver = await startWebhookReceiver([SECRET]);
    ({ server, owner } = await oneOrg({ WEBHOOK_RETRY_BASE_MS: '20' }));
  });
  afterAll(async () => {
    await server.stop();
    await receiver.close();
  });

  it('creates with the secret shown once, then masks it on every read', async () => {
    const created = await createWebhook(server, owner, { name: 'ops-feed', url: receiver.url, secret: SECRET, retries: 2 });
    expect(created).toMatchObject({ name: 'ops-feed', url: receiver.url, secret: SECRET, retries: 2, previous_secret_expires_at: null });
    expect(created.standard_webhooks_secret).toBe('whsec_' + Buffer.from(SECRET).toString('base64'));
    const read = await server.request('GET', `/webhooks/${created.id}`, { token: owner.token });
    expect(read.body.secret).toBe('****0001');
    expect(read.body.standard_webhooks_secret).toBeUndefined();
    const list = await server.request('GET', '/webhooks', { token: owner.token });
    expect(list.body.items.map((item: any) => item.secret)).toEqual(['****0001']);
    expect(list.text).not.toContain(SECRET);
    // at rest: sealed, not plain
    const stored = await server.service.services.collections.outboundWebhooks.get(owner.organization.id as never, created.id);
    expect(JSON.stringify(stored)).not.toContain(SECRET);

    const generated = await createWebhook(server, owner, { name: 'generated', url: receiver.url });
    expect(generated.secret).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generated.retries).toBe(3);
  });

  it('retries with backoff until the receiver takes it, logging every attempt', async () => {
    const webhook = await createWebhook(server, owner, { name: 'flaky', url: receiver.url, secret: SECRET, retries: 3 });
    receiver.failNext(2);
    const before = receiver.requests.length;
    const sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token, body: { payload: { note: 'hi' } } });
    expect(sent.status).toBe(202);
    expect(sent.body.attempts[0]).toMatchObject({ n: 1, status: 500, error: 'receiver answered 500' });
    const delivery = await waitForDelivery(server, owner, webhook.id, sent.body.id);
    expect(delivery.status).toBe('delivered');
    expect(delivery.attempts.map((attempt: any) => attempt.status)).toEqual([500, 500, 200]);
    for (const attempt of delivery.attempts) expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
    expect(delivery.payload).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhook.id, note: 'hi' } });

    const received = receiver.requests.slice(before);
    expect(received).toHaveLength(3);
    // every attempt verified (both schemes), one webhook-id across retries so receivers can deduplicate
    expect(received.every((request) => request.verified)).toBe(true);
    expect(new Set(received.map((request) => request.headers['webhook-id']))).toEqual(new Set([delivery.id]));
    expect(JSON.parse(received[2]!.body.toString())).toEqual(delivery.payload);

    const log = await server.request('GET', `/webhooks/${webhook.id}/deliveries`, { token: owner.token });
    expect(log.body).toMatchObject({ total: 1, next_cursor: null });
    expect(log.body.items[0].id).toBe(delivery.id);
    const failedOnly = await server.request('GET', `/webhooks/${webhook.id}/deliveries?status=failed`, { token: owner.token });
    expect(failedOnly.body.total).toBe(0);
  });

  it('gives up after `retries` and records the delivery as failed', async () => {
    const webhook = await createWebhook(server, owner, { name: 'down', url: receiver.url, secret: SECRET, retries: 1 });
    receiver.failNext(5, 503);
    const sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    const delivery = await waitForDelivery(server, owner, webhook.id, sent.body.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.map((attempt: any) => attempt.status)).toEqual([503, 503]);
    receiver.failNext(0);
  });

  it('logs a network failure with no status', async () => {
    const webhook = await createWebhook(server, owner, { name: 'nowhere', url: 'http://127.0.0.1:9/hook', secret: SECRET, retries: 0 });
    const sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    const delivery = await waitForDelivery(server, owner, webhook.id, sent.body.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ status: null, error: expect.stringMatching(/^network error/) });
  });

  it('rotation: during the overlap deliveries carry both signatures; without overlap only the new one', async () => {
    const webhook = await createWebhook(server, owner, { name: 'rotating', url: receiver.url, secret: SECRET, retries: 0 });
    const rotated = await server.request('POST', `/webhooks/${webhook.id}/rotate-secret`, {
      token: owner.token,
      body: { secret: 'the-new-secret-after-rotation', overlap_seconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toBe('the-new-secret-after-rotation');
    expect(Date.parse(rotated.body.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3500_000);

    // a receiver that still knows only the old secret keeps verifying
    receiver.acceptSecrets([SECRET]);
    let sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('delivered');
    let last = receiver.requests.at(-1)!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(last.serviceSignatureMatches).toEqual([SECRET]);
    // and one that switched to the new secret too
    receiver.acceptSecrets(['the-new-secret-after-rotation']);
    sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('delivered');

    // rotating again with no overlap: the old secret stops signing at once
    const generated = await server.request('POST', `/webhooks/${webhook.id}/rotate-secret`, { token: owner.token, body: { overlap_seconds: 0 } });
    expect(generated.body.previous_secret_expires_at).toBeNull();
    receiver.acceptSecrets(['the-new-secret-after-rotation']);
    sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('failed');
    last = receiver.requests.at(-1)!;
    expect(last.answered).toBe(401);
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(last.headers['x-service-signature-previous']).toBeUndefined();
    receiver.acceptSecrets([generated.body.secret]);
    sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('delivered');
    receiver.acceptSecrets([SECRET]);
  });

  it('verifies with a whsec_ secret as Standard Webhooks libraries write it', async () => {
    const whsec = 'whsec_' + Buffer.from('sixteen-byte-key-material').toString('base64');
    receiver.acceptSecrets([whsec]);
    const webhook = await createWebhook(server, owner, { name: 'whsec', url: receiver.url, secret: whsec, retries: 0 });
    expect(webhook.standard_webhooks_secret).toBe(whsec);
    const sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('delivered');
    expect(receiver.requests.at(-1)!.standardSignatureMatches).toEqual([whsec]);
    receiver.acceptSecrets([SECRET]);
  });

  it('updates name, url and retries; names are unique; deleting fails what is still queued', async () => {
    const webhook = await createWebhook(server, owner, { name: 'patchable', url: receiver.url, secret: SECRET });
    const patched = await server.request('PATCH', `/webhooks/${webhook.id}`, { token: owner.token, body: { retries: 5, url: receiver.url + '?v=2' } });
    expect(patched.body).toMatchObject({ retries: 5, url: receiver.url + '?v=2', secret: '****0001' });
    const clash = await server.request('PATCH', `/webhooks/${webhook.id}`, { token: owner.token, body: { name: 'ops-feed' } });
    expect(clash.status).toBe(409);
    const duplicate = await server.request('POST', '/webhooks', { token: owner.token, body: { name: 'ops-feed', url: receiver.url } });
    expectError(duplicate, 409, 'conflict');

    // a delivery waiting for its retry when the webhook goes away ends as failed
    const slow = await createWebhook(server, owner, { name: 'going-away', url: receiver.url, secret: SECRET, retries: 1 });
    // Retry-After is honoured: the retry waits 2 s, long enough to delete the webhook first
    receiver.failNext(1, 503, 2);
    const sent = await server.request('POST', `/webhooks/${slow.id}/test`, { token: owner.token });
    expect(sent.body.status).toBe('queued');
    expect(Date.parse(sent.body.next_attempt_at) - Date.parse(sent.body.attempts[0].at)).toBeGreaterThanOrEqual(1900);
    expect((await server.request('DELETE', `/webhooks/${slow.id}`, { token: owner.token })).status).toBe(204);
    const stored = async () => server.service.services.collections.webhookDeliveries.get(owner.organization.id as never, sent.body.id);
    await eventually(async () => ((await stored())?.status === 'queued' ? undefined : true), { what: 'the retry to be dropped' });
    expect((await stored())?.status).toBe('failed');
    expect((await server.request('GET', `/webhooks/${slow.id}`, { token: owner.token })).status).toBe(404);
  });

  it('answers every validation error with 400 and the field', async () => {
    const webhook = await createWebhook(server, owner, { name: 'valid', url: receiver.url, secret: SECRET });
    const bad: [string, string, unknown][] = [
      ['POST', '/webhooks', {}],
      ['POST', '/webhooks', { name: 'x', url: 'ftp://example.com/hook' }],
      ['POST', '/webhooks', { name: 'x', url: 'not a url' }],
      ['POST', '/webhooks', { name: '', url: receiver.url }],
      ['POST', '/webhooks', { name: '-dash', url: receiver.url }],
      ['POST', '/webhooks', { name: 'x', url: receiver.url, secret: 'short' }],
      ['POST', '/webhooks', { name: 'x', url: receiver.url, retries: 11 }],
      ['POST', '/webhooks', { name: 'x', url: receiver.url, retries: -1 }],
      ['POST', '/webhooks', { name: 'x', url: receiver.url, retries: 1.5 }],
      ['POST', '/webhooks', { name: 'x', url: receiver.url, extra: true }],
      ['PATCH', `/webhooks/${webhook.id}`, { secret: 'a-new-secret-via-patch' }],
      ['PATCH', `/webhooks/${webhook.id}`, { retries: 'three' }],
      ['POST', `/webhooks/${webhook.id}/rotate-secret`, { overlap_seconds: -1 }],
      ['POST', `/webhooks/${webhook.id}/rotate-secret`, { overlap_seconds: 7 * 86_400 + 1 }],
      ['POST', `/webhooks/${webhook.id}/rotate-secret`, { secret: 'short' }],
      ['POST', `/webhooks/${webhook.id}/test`, { payload: 'text' }],
      ['GET', `/webhooks/${webhook.id}/deliveries?status=lost`, undefined],
      ['GET', `/webhooks?limit=500`, undefined],
    ];
    for (const [method, path, body] of bad) {
      const answer = await server.request(method, path, { token: owner.token, body });
      expect({ path, body, status: answer.status, code: answer.body?.error?.code }).toEqual({ path, body, status: 400, code: 'validation_error' });
    }
    expect((await server.request('GET', '/webhooks/owh_missing', { token: owner.token })).status).toBe(404);
    expect((await server.request('GET', `/webhooks/${webhook.id}/deliveries/owd_missing`, { token: owner.token })).status).toBe(404);
    expect((await server.request('GET', '/webhooks')).status).toBe(401);
  });

  it('keeps organizations apart: another org gets 404 on every route of a webhook', async () => {
    const webhook = await createWebhook(server, owner, { name: 'private', url: receiver.url, secret: SECRET, retries: 0 });
    const sent = await server.request('POST', `/webhooks/${webhook.id}/test`, { token: owner.token });
    const intruder = await server.register();
    const token = intruder.token;
    const answers = [
      await server.request('GET', `/webhooks/${webhook.id}`, { token }),
      await server.request('PATCH', `/webhooks/${webhook.id}`, { token, body: { retries: 1 } }),
      await server.request('POST', `/webhooks/${webhook.id}/test`, { token }),
      await server.request('POST', `/webhooks/${webhook.id}/rotate-secret`, { token, body: {} }),
      await server.request('GET', `/webhooks/${webhook.id}/deliveries`, { token }),
      await server.request('GET', `/webhooks/${webhook.id}/deliveries/${sent.body.id}`, { token }),
      await server.request('DELETE', `/webhooks/${webhook.id}`, { token }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect((await server.request('GET', '/webhooks', { token })).body.total).toBe(0);
    // the same name is free in another organization
    expect((await server.request('POST', '/webhooks', { token, body: { name: 'private', url: receiver.url } })).status).toBe(201);
  });

  it('documents its routes in /openapi.json', async () => {
    const document = await server.request('GET', '/openapi.json');
    expect(document.status).toBe(200);
    const paths = document.body.paths;
    expect(Object.keys(paths['/api/v1/webhooks']).sort()).toEqual(['get', 'post']);
    expect(paths['/api/v1/webhooks/{id}/rotate-secret'].post['x-permission']).toBe('webhook:manage');
    expect(paths['/api/v1/webhooks/{id}/deliveries/{delivery_id}'].get).toBeDefined();
    expect(paths['/api/v1/webhook-samples/{sample_name}/run'].post).toBeDefined();
    expect(paths['/api/v1/task-recommendations'].get).toBeDefined();
  });

  it('lets a viewer read but not manage', async () => {
    const viewer = await addMember(server, owner, 'viewer');
    expect((await server.request('GET', '/webhooks', { token: viewer.token })).status).toBe(200);
    const denied = await server.request('POST', '/webhooks', { token: viewer.token, body: { name: 'nope', url: receiver.url } });
    expect(denied.status).toBe(403);
  });
});
