/** POST /hooks/:trigger_id end to end: signatures on raw bytes, bodies, limits, dedupe, replay, rotation, provisioned endpoints. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmac } from '../../runtime/crypto.js';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import { withTestServer, type Session, type TestServer } from '../helpers/server.js';
import {} from '../runtime/chat-helpers.js';
import { createTask, hookPath, runReaches, runsOf } from '../tasks/helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const MAX_BODY = 64 * 1024;

describe('inbound webhooks', () => {
  let server: TestServer, llm: FakeLlmServer, owner: Session;
  beforeAll(async () => ({ server, llm, owner } = await startWiredOrg({ WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY) })));
  afterAll(async () => stopLlmServer({ server, llm }));

  const webhookTask = (name: string, extra: Record<string, unknown> = {}) =>
    createTask(server, owner, {
      name,
      trigger: { kind: 'webhook' },
      input_template: { instruction: 'Build {{trigger.body.build.status}} on {{trigger.body.build.branch}} ({{trigger.delivery_id}})' },
      ...extra,
    });

  const post = (url: string, body: string | Buffer, headers: Record<string, string>) => server.request('POST', hookPath(url), { body, headers });

  const signed = (secret: string, body: string | Buffer, headers: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    'x-service-signature': signHmac(secret, Buffer.from(body)),
    ...headers,
  });

  it('returns url and secret once, masks the secret afterwards', async () => {
    const task = await webhookTask('masking');
    expect(task.trigger.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/hooks\/whk_[A-Za-z0-9]{32}$/);
    expect(task.trigger.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    const read = await server.request('GET', `/tasks/${task.id}`, { token: owner.token });
    expect(read.body.trigger.secret).toBe('whsec_********');
    expect(read.body.trigger.url).toBe(task.trigger.url);
    const list = await server.request('GET', '/tasks?limit=200', { token: owner.token });
    expect(JSON.stringify(list.body)).not.toContain(task.trigger.secret);
  });

  it('a signed JSON delivery is stored and starts a run (202 with delivery_id and run_id)', async () => {
    const task = await webhookTask('signed');
    const body = JSON.stringify({ build: { status: 'FAILURE', branch: 'main' } });
    llm.script([{ text: 'diagnosed' }]);
    const hit = await post(task.trigger.url, body, signed(task.trigger.secret, body));
    expect(hit.status).toBe(202);
    expect(hit.body.delivery_id).toMatch(/^dlv_/);
    expect(hit.body.run_id).toMatch(/^run_/);
    const run = await runReaches(server, owner, task.id, hit.body.run_id, 'succeeded');
    expect(run.origin).toBe('webhook');
    expect(run.delivery_id).toBe(hit.body.delivery_id);
    expect(run.input.instruction).toBe(`Build FAILURE on main (${hit.body.delivery_id})`);
    const deliveries = await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token });
    expect(deliveries.body.items).toHaveLength(1);
    const [delivery] = deliveries.body.items;
    expect(delivery).toMatchObject({ id: hit.body.delivery_id, verification: 'valid', status: 'accepted', run_id: hit.body.run_id, size_bytes: body.length });
    expect(Buffer.from(delivery.body_base64, 'base64').toString()).toBe(body);
    expect(delivery.headers['x-service-signature']).toBe(signHmac(task.trigger.secret, Buffer.from(body)));
  });

  it('refuses a wrong or missing signature (401, stored as rejected, no run); the signature covers the exact bytes', async () => {
    const task = await webhookTask('wrong signature');
    const body = '{"build":{"status":"FAILURE"}}';
    const wrong = await post(task.trigger.url, body, signed('whsec_not_the_secret', body));
    expectError(wrong, 401, 'bad_signature');
    // same JSON, different bytes: the signature of the compact form does not cover the spaced one
    const respaced = await post(task.trigger.url, '{ "build": {"status":"FAILURE"} }', signed(task.trigger.secret, body));
    expect(respaced.status).toBe(401);
    const missing = await post(task.trigger.url, body, { 'content-type': 'application/json' });
    expect(missing.status).toBe(401);
    const malformed = await post(task.trigger.url, body, { 'content-type': 'application/json', 'x-service-signature': 'sha1=abc' });
    expect(malformed.status).toBe(401);
    const deliveries = (await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.items;
    expect(deliveries.map((delivery: any) => [delivery.status, delivery.verification, delivery.run_id])).toEqual([
      ['rejected', 'invalid', null],
      ['rejected', 'invalid', null],
      ['rejected', 'missing', null],
      ['rejected', 'invalid', null],
    ]);
    expect(await runsOf(server, owner, task.id)).toHaveLength(0);
    // a bad body after a good signature is a 400, also stored
    const bad = await post(task.trigger.url, '{not json', signed(task.trigger.secret, '{not json'));
    expectError(bad, 400, 'invalid_json');
  });

  it('accepts unsigned deliveries when verify_signature is false', async () => {
    const task = await webhookTask('unsigned', { trigger: { kind: 'webhook', verify_signature: false } });
    expect(task.trigger.verify_signature).toBe(false);
    llm.script([{ text: 'ok' }]);
    const hit = await post(task.trigger.url, '{"build":{"status":"OK","branch":"dev"}}', { 'content-type': 'application/json' });
    expect(hit.status).toBe(202);
    const deliveries = (await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.items;
    expect(deliveries[0].verification).toBe('skipped');
    await runReaches(server, owner, task.id, hit.body.run_id, 'succeeded');
  });

  it('answers 413 for a body over WEBHOOK_MAX_BODY_BYTES, before the handler', async () => {
    const task = await webhookTask('oversize');
    const body = Buffer.alloc(MAX_BODY + 1, 0x61);
    const hit = await post(task.trigger.url, body, signed(task.trigger.secret, body));
    expectError(hit, 413, 'payload_too_large');
    expect((await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.total).toBe(0);
  });

  it('answers 429 with Retry-After over rate_limit_per_minute', async () => {
    const task = await webhookTask('rate limited', { webhook: { rate_limit_per_minute: 2 }, max_concurrent_runs: 1 });
    llm.script([{ text: 'a' }, { text: 'b' }]);
    const body = '{"build":{}}';
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof post>> | null = null;
    for (let i = 0; i < 3; i += 1) {
      const hit = await post(task.trigger.url, body, signed(task.trigger.secret, body));
      statuses.push(hit.status);
      if (hit.status === 429) limited = hit;
    }
    expect(statuses).toEqual([202, 202, 429]);
    expect(limited?.body.error.code).toBe('rate_limited');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.total).toBe(2);
  });

  it('answers 404 for a disabled task, a deleted one, and an unknown trigger', async () => {
    const task = await webhookTask('disabled');
    const body = '{}';
    await server.request('PATCH', `/tasks/${task.id}`, { token: owner.token, body: { enabled: false } });
    const disabled = await post(task.trigger.url, body, signed(task.trigger.secret, body));
    expectError(disabled, 404, 'not_found');
    await server.request('DELETE', `/tasks/${task.id}`, { token: owner.token });
    expect((await post(task.trigger.url, body, signed(task.trigger.secret, body))).status).toBe(404);
    expect((await post('/api/v1/hooks/whk_00000000000000000000000000000000', body, signed('x', body))).status).toBe(404);
    expect((await post('/api/v1/hooks/nonsense', body, {})).status).toBe(404);
  });

  it('deduplicates a sender delivery id: the repeat answers 200 with the original and starts nothing', async () => {
    const task = await webhookTask('dedupe');
    const body = '{"build":{"status":"FAILURE","branch":"x"}}';
    llm.script([{ text: 'once' }]);
    const headers = signed(task.trigger.secret, body, { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    const first = await post(task.trigger.url, body, headers);
    const repeat = await post(task.trigger.url, body, headers);
    expect(first.status).toBe(202);
    expectStatus(repeat, 200).toMatchObject({ delivery_id: first.body.delivery_id, run_id: first.body.run_id, status: 'duplicate' });
    await runReaches(server, owner, task.id, first.body.run_id, 'succeeded');
    expect(await runsOf(server, owner, task.id)).toHaveLength(1);
    expect((await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.total).toBe(1);
  });

  it('replays a stored delivery into a new run linked to the original', async () => {
    const task = await webhookTask('replay');
    const body = '{"build":{"status":"FAILURE","branch":"release"}}';
    llm.script([{ text: 'first' }, { text: 'again' }]);
    const hit = await post(task.trigger.url, body, signed(task.trigger.secret, body));
    await runReaches(server, owner, task.id, hit.body.run_id, 'succeeded');
    const replay = await server.request('POST', `/hooks/deliveries/${hit.body.delivery_id}/replay`, { token: owner.token });
    expect(replay.status).toBe(202);
    expect(replay.body.delivery_id).toBe(hit.body.delivery_id);
    expect(replay.body.run_id).not.toBe(hit.body.run_id);
    const run = await runReaches(server, owner, task.id, replay.body.run_id, 'succeeded');
    expect(run).toMatchObject({ origin: 'replay', replay_of: hit.body.delivery_id, delivery_id: hit.body.delivery_id });
    expect(run.input.instruction).toBe(`Build FAILURE on release (${hit.body.delivery_id})`);
    const other = await server.register();
    expect((await server.request('POST', `/hooks/deliveries/${hit.body.delivery_id}/replay`, { token: other.token })).status).toBe(404);
    expect((await server.request('GET', `/hooks/deliveries/${hit.body.delivery_id}`, { token: other.token })).status).toBe(404);
    expect((await server.request('POST', '/hooks/deliveries/dlv_missing/replay', { token: owner.token })).status).toBe(404);
  });

  it('reads x-www-form-urlencoded and multipart/form-data bodies after verifying the raw bytes', async () => {
    const task = await createTask(server, owner, {
      name: 'forms',
      trigger: { kind: 'webhook' },
      input_template: { instruction: 'status={{trigger.body.status}} file={{trigger.body.log.filename}}' },
      max_concurrent_runs: 2,
    });
    llm.script([{ text: 'form' }, { text: 'multipart' }]);
    const form = 'status=FAILURE&job=deploy+web';
    const formHit = await post(task.trigger.url, form, signed(task.trigger.secret, form, { 'content-type': 'application/x-www-form-urlencoded' }));
    expect(formHit.status).toBe(202);
    const formRun = await runReaches(server, owner, task.id, formHit.body.run_id, 'succeeded');
    expect(formRun.input.instruction).toBe('status=FAILURE file=');

    const boundary = '----svc7MA4YWxkTrZu0gW';
    const multipart = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="status"\r\n\r\nFAILURE\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="log"; filename="build.log"\r\nContent-Type: text/plain\r\n\r\n`),
      Buffer.from([0x65, 0x72, 0x72, 0x0d, 0x0a, 0xff]),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const multipartHit = await post(
      task.trigger.url,
      multipart,
      signed(task.trigger.secret, multipart, { 'content-type': `multipart/form-data; boundary=${boundary}` }),
    );
    expect(multipartHit.status).toBe(202);
    const run = await runReaches(server, owner, task.id, multipartHit.body.run_id, 'succeeded');
    expect(run.input.instruction).toBe('status=FAILURE file=build.log');
    const stored = await server.request('GET', `/hooks/deliveries/${multipartHit.body.delivery_id}`, { token: owner.token });
    expect(Buffer.from(stored.body.body_base64, 'base64').equals(multipart)).toBe(true);

    const broken = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="x"\r\n\r\nno end`);
    const brokenHit = await post(
      task.trigger.url,
      broken,
      signed(task.trigger.secret, broken, { 'content-type': `multipart/form-data; boundary=${boundary}` }),
    );
    expectError(brokenHit, 400, 'validation_error');
    const xml = await post(task.trigger.url, '<a/>', signed(task.trigger.secret, '<a/>', { 'content-type': 'application/xml' }));
    expect(xml.status).toBe(415);
  });

  it('rotates the secret with an overlap in which both secrets verify', async () => {
    const task = await webhookTask('rotation');
    llm.script([{ text: '1' }, { text: '2' }, { text: '3' }]);
    const rotated = await server.request('POST', `/tasks/${task.id}/rotate-secret`, { token: owner.token, body: { overlap_secs: 3600 } });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.trigger.secret as string;
    expect(fresh).not.toBe(task.trigger.secret);
    expect(typeof rotated.body.trigger.previous_secret_expires_at).toBe('string');
    const body = '{"build":{}}';
    const old = await post(task.trigger.url, body, signed(task.trigger.secret, body));
    const current = await post(task.trigger.url, body, signed(fresh, body));
    expect([old.status, current.status]).toEqual([202, 202]);
    const verifications = (await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.items.map((d: any) => d.verification);
    expect(verifications).toEqual(['valid_previous_secret', 'valid']);
    // rotating with no overlap retires the old secret at once
    const again = await server.request('POST', `/tasks/${task.id}/rotate-secret`, { token: owner.token, body: { overlap_secs: 0 } });
    const retired = await post(task.trigger.url, body, signed(fresh, body));
    expect(retired.status).toBe(401);
    expect((await post(task.trigger.url, body, signed(again.body.trigger.secret, body))).status).toBe(202);
    const schedule = await createTask(server, owner, { name: 'no secret', trigger: { kind: 'schedule', cron: '0 0 1 1 *' } });
    expect((await server.request('POST', `/tasks/${schedule.id}/rotate-secret`, { token: owner.token })).status).toBe(409);
  });

  it('opt-in signed timestamps: outside the tolerance is refused', async () => {
    const task = await webhookTask('timestamps', { trigger: { kind: 'webhook', require_timestamp: true, timestamp_tolerance_secs: 60 } });
    llm.script([{ text: 'ok' }]);
    const body = '{"build":{}}';
    const now = Math.floor(Date.now() / 1000);
    const sign = (ts: number) => signHmac(task.trigger.secret, Buffer.concat([Buffer.from(`${ts}.`), Buffer.from(body)]));
    const fresh = await post(task.trigger.url, body, {
      'content-type': 'application/json',
      'x-service-timestamp': String(now),
      'x-service-signature': sign(now),
    });
    expect(fresh.status).toBe(202);
    const stale = await post(task.trigger.url, body, {
      'content-type': 'application/json',
      'x-service-timestamp': String(now - 3600),
      'x-service-signature': sign(now - 3600),
    });
    expect(stale.status).toBe(401);
    const bodyOnly = await post(task.trigger.url, body, signed(task.trigger.secret, body, { 'x-service-timestamp': String(now) }));
    expect(bodyOnly.status).toBe(401);
    const verifications = (await server.request('GET', `/tasks/${task.id}/deliveries`, { token: owner.token })).body.items.map((d: any) => d.verification);
    expect(verifications).toEqual(['valid', 'stale_timestamp', 'invalid']);
  });

  it('provisioned inbound endpoints (service_webhook) share the /hooks path', async () => {
    const created = await server.request('POST', '/inbound-webhooks', {
      token: owner.token,
      body: {
        name: 'vercel deploys',
        description: 'failed deployments',
        payload_template: 'Deployment {{trigger.body.type}}',
        system_prompt: 'You diagnose deployments.',
      },
    });
    expectStatus(created, 201).toMatchObject({
      name: 'vercel deploys',
      payload_template: 'Deployment {{trigger.body.type}}',
      system_prompt: 'You diagnose deployments.',
    });
    expect(created.body.secret_token).toMatch(/^whsec_/);
    expect(created.body.url).toContain(`/hooks/${created.body.slug}`);
    const read = await server.request('GET', `/inbound-webhooks/${created.body.id}`, { token: owner.token });
    expect(read.body.secret_token).toBeUndefined();
    llm.script([{ text: 'diagnosed' }]);
    const body = '{"type":"deployment.error"}';
    const hit = await post(created.body.url, body, signed(created.body.secret_token, body));
    expect(hit.status).toBe(202);
    const run = await runReaches(server, owner, created.body.id, hit.body.run_id, 'succeeded');
    expect(run.input.instruction).toBe('Deployment deployment.error');
    const system = (llm.requests.at(-1)?.body?.['messages'] as { role: string; content: string }[])[0];
    expect(system).toEqual({ role: 'system', content: 'You diagnose deployments.' });
    const bad = await server.request('POST', '/inbound-webhooks', { token: owner.token, body: { name: 'bad', payload_template: '{{> p}}' } });
    expect(bad.status).toBe(400);
    const other = await server.register();
    expect((await server.request('GET', `/inbound-webhooks/${created.body.id}`, { token: other.token })).status).toBe(404);
    // changed in place: the slug, URL and secret stay; a bad template is refused; another organization sees 404
    const patched = await server.request('PATCH', `/inbound-webhooks/${created.body.id}`, {
      token: owner.token,
      body: { description: null, payload_template: 'Deployment {{trigger.body.type}} failed', system_prompt: 'You triage.' },
    });
    expectStatus(patched, 200).toMatchObject({
      name: 'vercel deploys',
      description: null,
      payload_template: 'Deployment {{trigger.body.type}} failed',
      slug: created.body.slug,
      url: created.body.url,
    });
    expect(patched.body.secret_token).toBeUndefined();
    expect((await server.request('PATCH', `/inbound-webhooks/${created.body.id}`, { token: owner.token, body: { payload_template: '{{> p}}' } })).status).toBe(
      400,
    );
    expect((await server.request('PATCH', `/inbound-webhooks/${created.body.id}`, { token: owner.token, body: { slug: 'mine' } })).status).toBe(400);
    expect((await server.request('PATCH', `/inbound-webhooks/${created.body.id}`, { token: other.token, body: { name: 'x' } })).status).toBe(404);
    llm.script([{ text: 'triaged' }]);
    const second = await post(created.body.url, body, signed(created.body.secret_token, body));
    const rerun = await runReaches(server, owner, created.body.id, second.body.run_id, 'succeeded');
    expect(rerun.input.instruction).toBe('Deployment deployment.error failed');
    expect((await server.request('DELETE', `/inbound-webhooks/${created.body.id}`, { token: owner.token })).status).toBe(204);
    expect((await post(created.body.url, body, signed(created.body.secret_token, body))).status).toBe(404);
  });
});

describe('inbound webhooks in production', () => {
  it('refuses verify_signature: false when NODE_ENV=production', async () => {
    await withTestServer({ NODE_ENV: 'production' }, async (server) => {
      const owner = await server.register();
      const refused = await server.request('POST', '/tasks', {
        token: owner.token,
        body: { name: 'unsafe', trigger: { kind: 'webhook', verify_signature: false } },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain('verify_signature');
    });
  });
});
