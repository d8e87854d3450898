/**
 * Engine `webhook`: the dispatch arrives signed (verified here with the
 * `standardwebhooks` library, as a receiver would), and the receiver settles it
 * with a signed callback; bad or missing signatures are 401, a replay 409.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { eventually } from '../helpers/eventually.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const SECRET = 'engine-shared-signing-secret-01';
const WHSEC = 'whsec_' + Buffer.from(SECRET).toString('base64');

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** what standardwebhooks' verify returned, or the error it threw */
  readonly verified: unknown;
}

/** a webhook engine: verifies every POST, answers `answer` (status and JSON) */
async function startReceiver() {
  const received: Received[] = [];
  let answer: { status: number; json: unknown } = { status: 202, json: { accepted: true } };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: unknown;
      try {
        verified = new Webhook(WHSEC).verify(body, request.headers as Record<string, string>);
      } catch (error) {
        verified = error;
      }
      if (request.method === 'POST') received.push({ headers: request.headers, body, verified });
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/engine`,
    received,
    answerWith: (status: number, json: unknown) => (answer = { status, json }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const signed = (id: string, body: string, secret = WHSEC): Record<string, string> => {
  const now = new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body),
  };
};

describe('gateways: webhook engine', () => {
  const ctx = useSuite(async (own) => {
    const receiver = own(await startReceiver());
    const started = own(await oneOrg(), (it) => it.server.stop());
    const created = await started.server.request('POST', '/gateways', {
      token: started.owner.token,
      body: { name: 'hook-engine', engine_type: 'webhook', base_url: receiver.url, api_key: SECRET, context: { team: 'ops' } },
    });
    if (created.status !== 201) throw new Error(created.text);
    return { receiver, ...started, gateway: created.body };
  });

  it('POSTs the dispatch signed like outbound webhooks; a signed callback settles it; bad signatures are 401 and a replay 409', async () => {
    const { server, owner, receiver, gateway } = ctx;
    receiver.answerWith(202, { accepted: true });
    const before = receiver.received.length;
    const pending = server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'hook-engine', {
      workflow_run_id: 'wfr_7',
      step_id: 'notify',
      input: { channel: '#ops' },
    });
    const delivery = await eventually(() => receiver.received[before], { what: 'the engine to receive the dispatch' });
    expect(delivery.verified).toMatchObject({ type: 'gateway.dispatch', gateway_id: gateway.id, workflow_run_id: 'wfr_7', step_id: 'notify' });
    const payload = JSON.parse(delivery.body);
    expect(payload).toMatchObject({ input: { channel: '#ops' }, context: { team: 'ops' } });
    expect(delivery.headers['webhook-id']).toBe(payload.dispatch_id);
    expect(delivery.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(payload.callback_url).toBe(`${server.url}/gateways/callbacks/${payload.dispatch_id}`);

    const path = `/gateways/callbacks/${payload.dispatch_id}`;
    const body = JSON.stringify({ status: 'succeeded', output: { posted: true } });
    const missing = await server.request('POST', path, { body, headers: { 'content-type': 'application/json' } });
    expectError(missing, 401, 'bad_signature');
    const wrongKey = await server.request('POST', path, {
      body,
      headers: signed('cb-1', body, 'whsec_' + Buffer.from('some-other-secret-000').toString('base64')),
    });
    expect(wrongKey.status).toBe(401);
    const tampered = await server.request('POST', path, { body: body.replace('true', 'false'), headers: signed('cb-1', body) });
    expect(tampered.status).toBe(401);
    const running = await server.request('GET', `/gateways/${gateway.id}/dispatches`, { token: owner.token });
    expect(running.body.items.at(-1)).toMatchObject({ id: payload.dispatch_id, status: 'running', external_ref: payload.dispatch_id });

    const headers = signed('cb-1', body);
    const settled = await server.request('POST', path, { body, headers });
    expectStatus(settled, 200).toMatchObject({ id: payload.dispatch_id, status: 'succeeded', output: { posted: true } });
    await expect(pending).resolves.toEqual({ status: 'succeeded', output: { posted: true } });

    const replay = await server.request('POST', path, { body, headers });
    expectError(replay, 409, 'conflict');
    const unknown = await server.request('POST', '/gateways/callbacks/gdp_unknown', { body, headers });
    expect(unknown.status).toBe(404);
  });

  it('a receiver may settle at once in its answer; a failing callback carries the error', async () => {
    const { server, owner, receiver } = ctx;
    receiver.answerWith(200, { status: 'failed', output: null, error: 'no such channel' });
    await expect(
      server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'hook-engine', { workflow_run_id: 'wfr_8', step_id: 'notify', input: {} }),
    ).resolves.toEqual({ status: 'failed', output: null, error: 'no such channel' });

    receiver.answerWith(202, {});
    const before = receiver.received.length;
    const pending = server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'hook-engine', {
      workflow_run_id: 'wfr_9',
      step_id: 'x',
      input: {},
    });
    const delivery = await eventually(() => receiver.received[before], { what: 'the dispatch' });
    const { dispatch_id: id } = JSON.parse(delivery.body);
    const body = JSON.stringify({ status: 'failed', error: 'quota exceeded' });
    expect((await server.request('POST', `/gateways/callbacks/${id}`, { body, headers: signed('cb-2', body) })).status).toBe(200);
    await expect(pending).resolves.toEqual({ status: 'failed', output: null, error: 'quota exceeded' });
  });

  it('a receiver answering 5xx is an engine down: 503 sidecar_unavailable', async () => {
    const { server, owner, receiver } = ctx;
    receiver.answerWith(500, { error: 'boom' });
    await expect(
      server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'hook-engine', { workflow_run_id: 'wfr_10', step_id: 'x', input: {} }),
    ).rejects.toMatchObject({ code: 'sidecar_unavailable', status: 503 });
    receiver.answerWith(202, {});
    const probed = await server.request('POST', `/gateways/${ctx.gateway.id}/test`, { token: owner.token });
    expect(probed.body.last_health_status).toBe('ok');
  });
});

describe('gateways: webhook callback_url with PUBLIC_URL', () => {
  const ctx = useSuite(async (own) => {
    const receiver = own(await startReceiver());
    return { receiver, ...own(await oneOrg({ PUBLIC_URL: 'https://agents.example.com/svc' }), (it) => it.server.stop()) };
  });

  it('builds the callback URL on PUBLIC_URL', async () => {
    const { server, owner, receiver } = ctx;
    receiver.answerWith(200, { status: 'succeeded', output: 'ok' });
    await server.request('POST', '/gateways', {
      token: owner.token,
      body: { name: 'public', engine_type: 'webhook', base_url: receiver.url, api_key: SECRET, is_default: true },
    });
    await server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'default', { workflow_run_id: 'w', step_id: 's', input: {} });
    const payload = JSON.parse(receiver.received[0]!.body);
    expect(payload.callback_url).toBe(`https://agents.example.com/svc/api/v1/gateways/callbacks/${payload.dispatch_id}`);
  });
});
