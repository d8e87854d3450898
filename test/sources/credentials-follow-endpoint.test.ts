/**
 * Stored credentials never follow a changed endpoint: a PATCH that moves a
 * source's URL-like field (base_url, url, ...) must give every secret again;
 * the masked value `********` is refused there (400 naming each field), and
 * the host at the new URL never sees the old secret. Two recording fakes
 * (the old host and the new one) speak just enough of the Runway API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

interface Recorder {
  readonly server: Server;
  readonly url: string;
  /** the Authorization header of every request, in order */
  readonly seen: string[];
}

/** answers GET /v1/organization for `key-new`, 401 for anything else; records what credentials came */
async function startRecorder(): Promise<Recorder> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const authorization = req.headers['authorization'] ?? '';
    seen.push(authorization);
    if (req.url === '/v1/organization' && authorization === 'Bearer key-new') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ creditBalance: 10, tier: { maxMonthlyCreditSpend: 100, models: {} }, usage: { models: {} } }));
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Invalid API key' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('stored credentials do not follow a changed endpoint', () => {
  let server: TestServer;
  let owner: Session;
  let other: Session;
  let oldHost: Recorder;
  let newHost: Recorder;

  beforeAll(async () => {
    [oldHost, newHost] = await Promise.all([startRecorder(), startRecorder()]);
    server = await startTestServer();
    owner = await server.register('Creds Org');
    other = await server.register('Other Org');
  });
  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => oldHost.server.close(resolve));
    await new Promise((resolve) => newHost.server.close(resolve));
  });

  const createSource = async (name: string): Promise<string> => {
    const created = await server.request('POST', '/sources', {
      token: owner.token,
      body: { name, connector: 'runway', config: { api_key: 'key-old', base_url: oldHost.url, default_model: 'gen4_turbo' } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.config).toMatchObject({ api_key: '********', base_url: oldHost.url });
    return created.body.id as string;
  };
  const patch = (id: string, config: Record<string, unknown>, session = owner) =>
    server.request('PATCH', `/sources/${id}`, { token: session.token, body: { config } });
  const test = (id: string) => server.request('GET', `/sources/${id}/test`, { token: owner.token });

  it('a new base_url with the masked key is refused (400 naming the key); nothing is sent to the new host', async () => {
    const id = await createSource('moved with mask');
    const refused = await patch(id, { api_key: '********', base_url: newHost.url, default_model: 'gen4_turbo' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'validation_error',
      details: { missing_secrets: ['config.api_key'], changed_endpoints: ['config.base_url'], issues: [{ path: 'config.api_key' }] },
    });
    // the source is unchanged: it still points at the old host with the old key
    const stored = await server.request('GET', `/sources/${id}`, { token: owner.token });
    expect(stored.body.config.base_url).toBe(oldHost.url);
    await test(id);
    expect(oldHost.seen.at(-1)).toBe('Bearer key-old');
    expect(newHost.seen).not.toContain('Bearer key-old');
  });

  it('adding a base_url where there was none (the public API) also needs the key again', async () => {
    const created = await server.request('POST', '/sources', {
      token: owner.token,
      body: { name: 'no base', connector: 'runway', config: { api_key: 'key-old' } },
    });
    expect(created.status).toBe(201);
    const refused = await patch(created.body.id, { api_key: '********', base_url: newHost.url });
    expect(refused.body.error).toMatchObject({ code: 'validation_error', details: { missing_secrets: ['config.api_key'] } });
  });

  it('with the key given again the move is accepted, and the new host gets only the new key', async () => {
    const id = await createSource('moved with key');
    const before = newHost.seen.length;
    const moved = await patch(id, { api_key: 'key-new', base_url: newHost.url, default_model: 'gen4_turbo' });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.config).toMatchObject({ api_key: '********', base_url: newHost.url });
    const tested = await test(id);
    expect(tested.status, tested.text).toBe(200);
    expect(newHost.seen.slice(before)).toEqual(['Bearer key-new']);
    expect(newHost.seen).not.toContain('Bearer key-old');
  });

  it('a change that leaves the endpoint alone keeps the stored key behind the mask', async () => {
    const id = await createSource('model change');
    const changed = await patch(id, { api_key: '********', base_url: oldHost.url, default_model: 'gen4.5' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.config).toMatchObject({ default_model: 'gen4.5', api_key: '********' });
    const before = oldHost.seen.length;
    await test(id);
    expect(oldHost.seen.slice(before)).toEqual(['Bearer key-old']);
  });

  it('an MCP source: a new url with masked headers is refused naming each header', async () => {
    const created = await server.request('POST', '/sources', {
      token: owner.token,
      body: {
        name: 'mcp moved',
        connector: 'mcp',
        config: { transport: 'http', url: `${oldHost.url}/mcp`, headers: { authorization: 'Bearer mcp-old', 'x-tenant': 't1' } },
      },
    });
    expect(created.status).toBe(201);
    const refused = await patch(created.body.id, {
      transport: 'http',
      url: `${newHost.url}/mcp`,
      headers: { authorization: '********', 'x-tenant': '********' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.missing_secrets).toEqual(['config.headers.authorization', 'config.headers.x-tenant']);
    expect(newHost.seen).not.toContain('Bearer mcp-old');
  });

  it("another organization's source is 404, whatever the body", async () => {
    const id = await createSource('not yours');
    const answer = await patch(id, { api_key: 'key-new', base_url: newHost.url }, other);
    expectError(answer, 404, 'not_found');
  });
});
