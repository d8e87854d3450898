/**
 * Configuring a webhook trigger's sender: changing the scheme and the secret
 * on update, organizations' secrets kept apart, and the absolute URLs a user
 * pastes into senders (PUBLIC_URL, or the address the caller reached).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';
import { signHmac } from '../../runtime/crypto.js';
import { twoOrgs } from '../helpers/orgs.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { simulatedClock } from '../helpers/clock.js';
import { createTask, hookPath, runsOf } from '../tasks/helpers.js';
import { expectError } from '../helpers/expect-status.js';

const PUBLIC_URL = 'https://automation.example.test/edge';

describe('webhook sender configuration', () => {
  let server: TestServer, owner: Session, stranger: Session;
  beforeAll(async () => ({ server, alice: owner, bob: stranger } = await twoOrgs()));
  afterAll(async () => server.stop());

  const post = (url: string, body: string, headers: Record<string, string>) =>
    server.request('POST', hookPath(url), { body, headers: { 'content-type': 'application/json', ...headers } });
  const patch = (session: Session, id: string, trigger: Record<string, unknown>) =>
    server.request('PATCH', `/tasks/${id}`, { token: session.token, body: { trigger: { kind: 'webhook', ...trigger } } });
  const body = '{"action":"opened","number":7}';

  it('changes the scheme on update: the old header stops verifying, the new one starts, the secret stays', async () => {
    const task = await createTask(server, owner, { name: 'switch', trigger: { kind: 'webhook' }, input_template: { instruction: '#{{trigger.body.number}}' } });
    const secret: string = task.trigger.secret;
    expect(task.trigger.signature_scheme).toBe('service');
    expect(task.trigger.webhook_signature).toMatchObject({ scheme: 'service', header: 'X-Service-Signature', secret_source: 'service' });
    expect((await post(task.trigger.url, body, { 'x-service-signature': signHmac(secret, Buffer.from(body)) })).status).toBe(202);

    const switched = await patch(owner, task.id, { signature_scheme: 'github' });
    expect(switched.status).toBe(200);
    expect(switched.body.trigger).toMatchObject({ signature_scheme: 'github', secret: 'whsec_********', webhook_signature: { header: 'X-Hub-Signature-256' } });
    const old = await post(task.trigger.url, body, { 'x-service-signature': signHmac(secret, Buffer.from(body)) });
    expect(old.status).toBe(401);
    expect(old.body.error.message).toContain('X-Hub-Signature-256');
    expect((await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign(secret, body) })).status).toBe(202);
    expect((await server.request('GET', `/tasks/${task.id}`, { token: owner.token })).body.trigger.signature_scheme).toBe('github');

    // a secret pasted from GitHub replaces the old one at once
    const pasted = `gh-${randomBytes(16).toString('hex')}`;
    expect((await patch(owner, task.id, { secret: pasted })).status).toBe(200);
    expect((await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign(secret, body) })).status).toBe(401);
    expect((await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign(pasted, body) })).status).toBe(202);
    expect(await runsOf(server, owner, task.id)).toHaveLength(3);

    // to a scheme whose sender generates the secret: only with that secret
    const noSecret = await patch(owner, task.id, { signature_scheme: 'slack' });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.details.issues[0].path).toBe('trigger.secret');
    // the current secret is no Standard Webhooks key (whsec_<base64>)
    expect((await patch(owner, task.id, { signature_scheme: 'standard_webhooks' })).status).toBe(400);
    // back to the service scheme: the secret keeps working; setting one by hand there is refused
    expect((await patch(owner, task.id, { signature_scheme: 'service' })).status).toBe(200);
    expect((await post(task.trigger.url, body, { 'x-service-signature': signHmac(pasted, Buffer.from(body)) })).status).toBe(202);
    const handSet = await patch(owner, task.id, { secret: pasted });
    expect(handSet.status).toBe(400);
    expect(handSet.body.error.details.issues[0].path).toBe('trigger.secret');
    const unknown = await patch(owner, task.id, { signature_scheme: 'gitlab' });
    expectError(unknown, 400, 'validation_error');
  });

  it('refuses secrets too short or with spaces, at create', async () => {
    for (const secret of ['short', 'has a space in the middle']) {
      const created = await server.request('POST', '/tasks', {
        token: owner.token,
        body: { name: `bad ${secret}`, trigger: { kind: 'webhook', signature_scheme: 'vercel', secret } },
      });
      expect(created.status).toBe(400);
      expect(created.body.error.details.issues[0].path).toBe('trigger.secret');
    }
  });

  it("another organization's trigger does not verify with this organization's secret", async () => {
    const mine = await createTask(server, owner, { name: 'mine', trigger: { kind: 'webhook', signature_scheme: 'github' } });
    const theirs = await createTask(server, stranger, { name: 'theirs', trigger: { kind: 'webhook', signature_scheme: 'github' } });
    const signedWithMine = { 'x-hub-signature-256': await githubSign(mine.trigger.secret, body) };
    const hit = await post(theirs.trigger.url, body, signedWithMine);
    expect(hit.status).toBe(401);
    expect(await runsOf(server, stranger, theirs.id)).toHaveLength(0);
    expect((await post(mine.trigger.url, body, signedWithMine)).status).toBe(202);
    // and the other organization cannot read or change this one's trigger
    expect((await patch(stranger, mine.id, { signature_scheme: 'token' })).status).toBe(404);
    expect((await server.request('GET', `/tasks/${mine.id}`, { token: stranger.token })).status).toBe(404);
  });

  it('checks timestamps on the runtime clock; scheme and sender secret survive a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-senders-'));
    const jwtSecret = randomBytes(32).toString('hex');
    const start = new Date('2026-03-02T09:00:00Z');
    const clock = simulatedClock(start.toISOString());
    const slackSecret = randomBytes(16).toString('hex');
    const slackHeaders = (seconds: number, payload: string) => ({
      'x-slack-request-timestamp': String(seconds),
      'x-slack-signature': `v0=${createHmac('sha256', slackSecret).update(`v0:${seconds}:${payload}`).digest('hex')}`,
    });
    let clocked: TestServer = await startTestServer({ JWT_SECRET: jwtSecret }, { dataDir, clock });
    let session: Session;
    let slackTask: any;
    try {
      session = await clocked.register();
      const standard = await createTask(clocked, session, { name: 'std', trigger: { kind: 'webhook', signature_scheme: 'standard_webhooks' } });
      const sender = new Webhook(standard.trigger.secret);
      const signedAt = (id: string, at: Date) => ({
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': sender.sign(id, at, body),
      });
      const hook = (url: string, headers: Record<string, string>) => clocked.request('POST', hookPath(url), { body, headers });
      expect((await hook(standard.trigger.url, signedAt('m1', start))).status).toBe(202);
      // the wall clock is months from the runtime's: stale there
      expect((await hook(standard.trigger.url, signedAt('m2', new Date()))).status).toBe(401);
      clock.increment(301_000);
      expect((await hook(standard.trigger.url, signedAt('m3', start))).status).toBe(401);
      expect((await hook(standard.trigger.url, signedAt('m4', new Date(start.getTime() + 300_000)))).status).toBe(202);
      slackTask = await createTask(clocked, session, { name: 'slack', trigger: { kind: 'webhook', signature_scheme: 'slack', secret: slackSecret } });
    } finally {
      await clocked.stop();
    }
    clocked = await startTestServer({ JWT_SECRET: jwtSecret }, { dataDir, clock });
    try {
      const read = await clocked.request('GET', `/tasks/${slackTask.id}`, { token: session.token });
      expect(read.body.trigger).toMatchObject({ signature_scheme: 'slack', secret: 'whsec_********' });
      const now = Math.floor(clock.now() / 1000);
      const hit = await clocked.request('POST', hookPath(slackTask.trigger.url), {
        body,
        headers: { 'content-type': 'application/json', ...slackHeaders(now, body) },
      });
      expect(hit.status).toBe(202);
      const stale = await clocked.request('POST', hookPath(slackTask.trigger.url), {
        body,
        headers: { 'content-type': 'application/json', ...slackHeaders(now - 301, body) },
      });
      expect(stale.status).toBe(401);
    } finally {
      await clocked.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('builds absolute webhook and Slack URLs on PUBLIC_URL', async () => {
    const behindProxy = await startTestServer({ PUBLIC_URL: `${PUBLIC_URL}/` });
    try {
      const session = await behindProxy.register();
      const created = await behindProxy.request('POST', '/tasks', {
        token: session.token,
        body: { name: 'proxied', trigger: { kind: 'webhook', signature_scheme: 'token' } },
      });
      expect(created.status).toBe(201);
      expect(created.body.trigger.webhook_url).toMatch(new RegExp(`^${PUBLIC_URL}/api/v1/hooks/whk_[A-Za-z0-9]{32}$`));
      const channel = await behindProxy.request('POST', '/channels', { token: session.token, body: { channel_type: 'slack', display_name: 'Ops' } });
      expect(channel.status).toBe(201);
      expect(channel.body.events_url).toBe(`${PUBLIC_URL}/api/v1/chat/incoming/slack/${channel.body.id}`);
      expect(channel.body.interactivity_url).toBe(`${PUBLIC_URL}/api/v1/chat/incoming/slack/${channel.body.id}/interactivity`);
      const listed = await behindProxy.request('GET', '/channels', { token: session.token });
      expect(listed.body.items[0].events_url).toBe(channel.body.events_url);
    } finally {
      await behindProxy.stop();
    }
    for (const bad of ['ftp://automation.example.test', 'https://automation.example.test/?x=1', 'not a url']) {
      expect(() => loadConfig({ DATA_DIR: server.dataDir, JWT_SECRET: 'j'.repeat(40), PUBLIC_URL: bad }), bad).toThrow(ConfigError);
    }
  });
});
