/**
 * Real senders on POST /hooks/:trigger_id, signed by their own libraries or
 * documented algorithms: GitHub (@octokit/webhooks-methods, payloads from
 * @octokit/webhooks-examples), Standard Webhooks (standardwebhooks), Vercel
 * (HMAC-SHA1), Slack (v0) and a shared token. Each: a valid delivery starts a
 * run whose template sees the body; every kind of forgery is a 401 that runs
 * nothing.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { signHmac } from '../../runtime/crypto.js';
import { oneOrg } from '../helpers/orgs.js';
import { createTask, hookPath, runsOf } from '../tasks/helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

// the package's main is a JSON file
const githubExamples = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: Record<string, any>[] }[];
/** the first example of the event (a push with commits) */
const example = (name: string): Record<string, any> => {
  const examples = githubExamples.find((entry) => entry.name === name)?.examples ?? [];
  const payload = examples.find((entry) => name !== 'push' || (entry['commits'] as unknown[]).length > 0);
  if (!payload) throw new Error(`no ${name} example`);
  return payload;
};

const slackSign = (secret: string, timestamp: number, body: string): Record<string, string> => ({
  'x-slack-request-timestamp': String(timestamp),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
});
const vercelSign = (secret: string, body: string): string => createHmac('sha1', secret).update(body).digest('hex');
const nowSecs = (): number => Math.floor(Date.now() / 1000);

describe('webhook senders (signature schemes)', () => {
  const ctx = useSuite(async (own) => {
    // no LLM key: runs fail at once (llm_unconfigured); their rendered input is what these tests read
    const { server, owner } = ownOrgs(own, await oneOrg());
    return { owner, server };
  });

  const webhookTask = (name: string, trigger: Record<string, unknown>, instruction: string) =>
    createTask(ctx.server, ctx.owner, { name, trigger: { kind: 'webhook', ...trigger }, input_template: { instruction } });
  const post = (url: string, body: string, headers: Record<string, string>, query = '') =>
    ctx.server.request('POST', hookPath(url) + query, { body, headers: { 'content-type': 'application/json', ...headers } });
  const runInput = async (taskId: string, runId: string): Promise<Record<string, unknown>> =>
    (await ctx.server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: ctx.owner.token })).body.input;
  const deliveries = async (taskId: string): Promise<any[]> =>
    (await ctx.server.request('GET', `/tasks/${taskId}/deliveries?limit=200`, { token: ctx.owner.token })).body.items;
  /** a refused delivery: 401 bad_signature, and the task's run count does not move */
  const refused = async (taskId: string, response: { status: number; body: any }, runsBefore: number): Promise<void> => {
    expectError(response, 401, 'bad_signature');
    expect(await runsOf(ctx.server, ctx.owner, taskId)).toHaveLength(runsBefore);
  };

  it('github: real payloads signed by @octokit/webhooks-methods start runs; X-GitHub-Delivery repeats start nothing', async () => {
    const task = await webhookTask(
      'github',
      { signature_scheme: 'github' },
      '{{trigger.headers.[x-github-event]}} on {{trigger.body.repository.full_name}}: {{trigger.body.commits[0].id}}',
    );
    expect(task.trigger.signature_scheme).toBe('github');
    expect(task.trigger.webhook_url).toBe(task.trigger.url);
    expect(task.trigger.webhook_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/hooks\/whk_[A-Za-z0-9]{32}$/);
    expect(task.trigger.webhook_signature).toEqual({
      scheme: 'github',
      header: 'X-Hub-Signature-256',
      headers: ['X-Hub-Signature-256'],
      algorithm: 'HMAC-SHA256',
      format: 'sha256=<hex HMAC of the raw body>',
      secret_source: 'service_or_sender',
    });
    const secret: string = task.trigger.secret;
    expect(secret).toMatch(/^whsec_/);
    let accepted = 0;
    for (const event of ['push', 'pull_request', 'issues', 'ping']) {
      const payload = example(event);
      const body = JSON.stringify(payload);
      const hit = await post(task.trigger.url, body, {
        'x-hub-signature-256': await githubSign(secret, body),
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
      });
      expect(hit.status).toBe(202);
      accepted += 1;
      const input = await runInput(task.id, hit.body.run_id);
      const commit = event === 'push' ? (payload['commits'] as { id: string }[])[0]?.id : '';
      expect(commit).toBeDefined();
      expect(input['instruction']).toBe(`${event} on ${payload['repository'].full_name}: ${commit}`);
    }
    expect(await runsOf(ctx.server, ctx.owner, task.id)).toHaveLength(accepted);

    const body = JSON.stringify(example('push'));
    const signature = await githubSign(secret, body);
    await refused(task.id, await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign('whsec_someone-elses-secret', body) }), accepted);
    await refused(task.id, await post(task.trigger.url, body, {}), accepted);
    await refused(task.id, await post(task.trigger.url, body.replace('"ref":', '"ref" :'), { 'x-hub-signature-256': signature }), accepted);
    // the service's own header, validly signed, is not this task's scheme
    await refused(task.id, await post(task.trigger.url, body, { 'x-service-signature': signHmac(secret, Buffer.from(body)) }), accepted);

    const delivery = randomUUID();
    const first = await post(task.trigger.url, body, { 'x-hub-signature-256': signature, 'x-github-delivery': delivery });
    expect(first.status).toBe(202);
    const again = await post(task.trigger.url, body, { 'x-hub-signature-256': signature, 'x-github-delivery': delivery });
    expectStatus(again, 200).toEqual({ delivery_id: first.body.delivery_id, run_id: first.body.run_id, status: 'duplicate' });
    expect(await runsOf(ctx.server, ctx.owner, task.id)).toHaveLength(accepted + 1);
    const stored = await deliveries(task.id);
    expect(stored.filter((entry) => entry.status === 'rejected').map((entry) => entry.verification)).toEqual(['invalid', 'missing', 'invalid', 'missing']);
  });

  it('standard_webhooks: signed by the standardwebhooks library with the task secret; several signatures, stale timestamps, replayed ids', async () => {
    const task = await webhookTask(
      'standard',
      { signature_scheme: 'standard_webhooks' },
      'order {{trigger.body.order.id}} first item {{trigger.body.order.items[0].sku}}',
    );
    expect(task.trigger.webhook_signature).toMatchObject({
      scheme: 'standard_webhooks',
      headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
      timestamp_tolerance_secs: 300,
    });
    const sender = new Webhook(task.trigger.secret);
    const body = JSON.stringify({ order: { id: 'ord_1', items: [{ sku: 'A-1' }, { sku: 'B-2' }] } });
    const headersFor = (id: string, at: Date, signer = sender, payload = body) => ({
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(id, at, payload),
    });
    const hit = await post(task.trigger.url, body, headersFor('msg_1', new Date()));
    expect(hit.status).toBe(202);
    expect((await runInput(task.id, hit.body.run_id))['instruction']).toBe('order ord_1 first item A-1');
    // a sender rotating its secret lists two signatures; one matching is enough
    const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`);
    const rotating = headersFor('msg_2', new Date());
    const both = await post(task.trigger.url, body, {
      ...rotating,
      'webhook-signature': `${other.sign('msg_2', new Date(), body)} ${rotating['webhook-signature']}`,
    });
    expect(both.status).toBe(202);

    await refused(task.id, await post(task.trigger.url, body, headersFor('msg_3', new Date(), other)), 2);
    const { 'webhook-id': _id, ...noId } = headersFor('msg_4', new Date());
    await refused(task.id, await post(task.trigger.url, body, noId), 2);
    await refused(task.id, await post(task.trigger.url, body.replace('A-1', 'A-2'), headersFor('msg_5', new Date())), 2);
    // signed correctly, but ten minutes old
    const stale = await post(task.trigger.url, body, headersFor('msg_6', new Date(Date.now() - 600_000)));
    await refused(task.id, stale, 2);
    expect(stale.body.error.message).toContain('webhook-timestamp');
    await refused(task.id, await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign(task.trigger.secret, body) }), 2);
    // the same message id again: the original delivery, nothing new run
    const replayed = await post(task.trigger.url, body, headersFor('msg_1', new Date()));
    expectStatus(replayed, 200).toMatchObject({ delivery_id: hit.body.delivery_id, status: 'duplicate' });
    expect(await runsOf(ctx.server, ctx.owner, task.id)).toHaveLength(2);
    expect((await deliveries(task.id)).map((entry) => entry.verification).slice(2)).toEqual(['invalid', 'missing', 'invalid', 'stale_timestamp', 'missing']);

    // a secret pasted from elsewhere (whsec_<base64>) replaces the generated one
    const pasted = `whsec_${randomBytes(32).toString('base64')}`;
    const patched = await ctx.server.request('PATCH', `/tasks/${task.id}`, { token: ctx.owner.token, body: { trigger: { kind: 'webhook', secret: pasted } } });
    expect(patched.status).toBe(200);
    expect(patched.body.trigger.secret).toBe('whsec_********');
    expect((await post(task.trigger.url, body, headersFor('msg_7', new Date(), new Webhook(pasted)))).status).toBe(202);
    await refused(task.id, await post(task.trigger.url, body, headersFor('msg_8', new Date())), 3);
    const bad = await ctx.server.request('PATCH', `/tasks/${task.id}`, {
      token: ctx.owner.token,
      body: { trigger: { kind: 'webhook', secret: 'whsec_not base64!' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('trigger.secret');
  });

  it('vercel: the platform secret is required and write-only; x-vercel-signature is the hex HMAC-SHA1 of the body', async () => {
    const missing = await ctx.server.request('POST', '/tasks', {
      token: ctx.owner.token,
      body: { name: 'vercel no secret', trigger: { kind: 'webhook', signature_scheme: 'vercel' } },
    });
    expectError(missing, 400, 'validation_error');
    expect(missing.body.error.details.issues[0].path).toBe('trigger.secret');
    const secret = `vercel_${randomBytes(12).toString('hex')}`;
    const task = await webhookTask('vercel', { signature_scheme: 'vercel', secret }, '{{trigger.body.type}} {{trigger.body.payload.deployment.url}}');
    expect(task.trigger.secret).toBe('whsec_********');
    expect(JSON.stringify(task)).not.toContain(secret);
    expect(task.trigger.webhook_signature).toMatchObject({ header: 'x-vercel-signature', algorithm: 'HMAC-SHA1', secret_source: 'sender' });
    const body = JSON.stringify({ type: 'deployment.error', payload: { deployment: { url: 'app-abc.vercel.app' } } });
    const hit = await post(task.trigger.url, body, { 'x-vercel-signature': vercelSign(secret, body) });
    expect(hit.status).toBe(202);
    expect((await runInput(task.id, hit.body.run_id))['instruction']).toBe('deployment.error app-abc.vercel.app');
    await refused(task.id, await post(task.trigger.url, body, { 'x-vercel-signature': vercelSign(`${secret}x`, body) }), 1);
    await refused(task.id, await post(task.trigger.url, body, {}), 1);
    await refused(task.id, await post(task.trigger.url, body.replace('error', 'ready'), { 'x-vercel-signature': vercelSign(secret, body) }), 1);
    await refused(task.id, await post(task.trigger.url, body, { 'x-hub-signature-256': await githubSign(secret, body) }), 1);
    // the platform owns this secret: rotation here would break it
    const rotate = await ctx.server.request('POST', `/tasks/${task.id}/rotate-secret`, { token: ctx.owner.token });
    expectError(rotate, 409, 'conflict');
  });

  it('slack: v0 signatures over form and JSON bodies, a five-minute window, url_verification answered', async () => {
    const secret = randomBytes(16).toString('hex');
    const task = await webhookTask('slack', { signature_scheme: 'slack', secret }, '{{trigger.body.command}} {{trigger.body.text}}');
    expect(task.trigger.webhook_signature).toMatchObject({ headers: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'], timestamp_tolerance_secs: 300 });
    const form = 'command=%2Fdeploy&text=api+to+prod&user_name=ana';
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
    const hit = await post(task.trigger.url, form, { ...formHeaders, ...slackSign(secret, nowSecs(), form) });
    expect(hit.status).toBe(202);
    expect((await runInput(task.id, hit.body.run_id))['instruction']).toBe('/deploy api to prod');
    await refused(task.id, await post(task.trigger.url, form, { ...formHeaders, ...slackSign('another-signing-secret', nowSecs(), form) }), 1);
    await refused(task.id, await post(task.trigger.url, form, formHeaders), 1);
    await refused(task.id, await post(task.trigger.url, `${form}&x=1`, { ...formHeaders, ...slackSign(secret, nowSecs(), form) }), 1);
    await refused(task.id, await post(task.trigger.url, form, { ...formHeaders, ...slackSign(secret, nowSecs() - 600, form) }), 1);
    await refused(task.id, await post(task.trigger.url, form, { ...formHeaders, 'x-vercel-signature': vercelSign(secret, form) }), 1);
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'c-3a9f', token: 'legacy' });
    const verified = await post(task.trigger.url, challenge, slackSign(secret, nowSecs(), challenge));
    expectStatus(verified, 200).toEqual({ challenge: 'c-3a9f' });
    // unsigned, the challenge is refused like anything else
    await refused(task.id, await post(task.trigger.url, challenge, {}), 1);
    expect(await runsOf(ctx.server, ctx.owner, task.id)).toHaveLength(1);
  });

  it('token: X-Webhook-Token, Authorization: Bearer or ?token=, compared whole; never stored with the delivery', async () => {
    const task = await webhookTask('jenkins', { signature_scheme: 'token' }, 'build {{trigger.body.build.number}} {{trigger.body.build.phase}}');
    expect(task.trigger.webhook_signature).toMatchObject({ scheme: 'token', header: 'X-Webhook-Token' });
    const token: string = task.trigger.secret;
    const body = JSON.stringify({ name: 'api', build: { number: 42, phase: 'COMPLETED', status: 'FAILURE' } });
    const viaHeader = await post(task.trigger.url, body, { 'x-webhook-token': token });
    expect(viaHeader.status).toBe(202);
    expect((await runInput(task.id, viaHeader.body.run_id))['instruction']).toBe('build 42 COMPLETED');
    expect((await post(task.trigger.url, body, { authorization: `Bearer ${token}` })).status).toBe(202);
    expect((await post(task.trigger.url, body, {}, `?token=${encodeURIComponent(token)}`)).status).toBe(202);
    await refused(task.id, await post(task.trigger.url, body, { 'x-webhook-token': `${token}x` }), 3);
    await refused(task.id, await post(task.trigger.url, body, { 'x-webhook-token': token.slice(0, -1) }), 3);
    await refused(task.id, await post(task.trigger.url, body, {}, '?token=whsec_wrong'), 3);
    await refused(task.id, await post(task.trigger.url, body, {}), 3);
    await refused(task.id, await post(task.trigger.url, body, { 'x-service-signature': signHmac(token, Buffer.from(body)) }), 3);
    const stored = JSON.stringify(await deliveries(task.id));
    expect(stored).not.toContain(token.slice(6));
  });
});
