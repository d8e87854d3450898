/**
 * The egress guard through the real API, one outbound family at a time:
 * webhook deliveries, connector sources (/test and a tool call), an MCP
 * bridge source, and an organization's LLM base URL (settings and a chat
 * run). The servers start with EGRESS_ALLOW empty or narrow; local fakes
 * listen on 127.0.0.1 (and 127.0.0.2) and must not be reached when refused.
 * Private and metadata addresses are only refused, never contacted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { asOrgId } from '../../runtime/store/types.js';
import { startFakeGrafanaServer, type FakeGrafanaServer } from '../fakes/grafana/server.js';
import { startFakeMcpHttp } from '../fakes/mcp/http-server.js';
import { startWebhookReceiver } from '../fakes/webhook-receiver/server.js';
import { oneOrg } from '../helpers/orgs.js';
import { withTestServer, startTestServer } from '../helpers/server.js';
import { send, startFakeLlmServer, wireOrganization } from '../runtime/chat-helpers.js';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { expectError } from '../helpers/expect-status.js';

/** loopback spellings that WHATWG URL reads as a literal address (refused when saved) */
const literalLoopback = (port: number): string[] => [
  `http://127.0.0.1:${port}/`,
  `http://127.1:${port}/`,
  `http://2130706433:${port}/`,
  `http://0x7f000001:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://[::1]:${port}/`,
  `http://[::ffff:7f00:1]:${port}/`,
];
const OTHER_REFUSED = [
  ['http://169.254.169.254/latest/meta-data/', 'metadata'],
  ['http://10.0.0.1/', 'private'],
  ['http://[fe80::1]/', 'link_local'],
] as const;

describe('egress guard, EGRESS_ALLOW empty', () => {
  const ctx = useSuite(async (own) => {
    const [receiver, grafana, mcp, llm] = await Promise.all([startWebhookReceiver(), startFakeGrafanaServer(), startFakeMcpHttp(), startFakeLlmServer()]);
    for (const fake of [receiver, grafana, mcp, llm]) own(fake);
    return { receiver, grafana, mcp, llm, ...ownOrgs(own, await oneOrg({ EGRESS_ALLOW: '', LLM_API_KEY: FAKE_LLM_API_KEY }, { name: 'Egress Org' })) };
  });

  const portOf = (url: string): number => Number(new URL(url).port);

  describe('outbound webhooks', () => {
    it('a receiver URL that is a refused literal address is refused when saved, in every spelling (422 egress_refused)', async () => {
      for (const url of literalLoopback(portOf(ctx.receiver.url))) {
        const created = await ctx.server.request('POST', '/webhooks', { token: ctx.owner.token, body: { name: `w-${url.length}-${Math.random()}`, url } });
        expect(created.status, url).toBe(422);
        expect(created.body.error).toMatchObject({ code: 'egress_refused', details: { field: 'url', address_class: 'loopback' } });
      }
      for (const [url, kind] of OTHER_REFUSED) {
        const created = await ctx.server.request('POST', '/webhooks', { token: ctx.owner.token, body: { name: `w-${kind}`, url } });
        expect(created.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: kind } });
      }
      const ok = await ctx.server.request('POST', '/webhooks', { token: ctx.owner.token, body: { name: 'public', url: 'https://hooks.example.com/in' } });
      expect(ok.status).toBe(201);
      const moved = await ctx.server.request('PATCH', `/webhooks/${ok.body.id}`, { token: ctx.owner.token, body: { url: 'http://0x7f000001/' } });
      expect(moved.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback' } });
    });

    it('a name resolving to loopback is refused at delivery: failed at once, egress_refused in the log, nothing sent', async () => {
      const created = await ctx.server.request('POST', '/webhooks', {
        token: ctx.owner.token,
        body: { name: 'by-name', url: `http://localhost:${portOf(ctx.receiver.url)}/hook`, retries: 3 },
      });
      expect(created.status).toBe(201);
      const before = ctx.receiver.requests.length;
      const tested = await ctx.server.request('POST', `/webhooks/${created.body.id}/test`, { token: ctx.owner.token, body: {} });
      expect(tested.status).toBe(202);
      expect(tested.body.status).toBe('failed');
      expect(tested.body.attempts).toHaveLength(1);
      expect(tested.body.attempts[0]).toMatchObject({ status: null, error: expect.stringMatching(/^egress_refused: .*loopback/) });
      expect(ctx.receiver.requests.length).toBe(before);
    });
  });

  describe('connector sources', () => {
    const grafanaSource = (name: string, baseUrl: string) => ({ name, connector: 'grafana', config: { base_url: baseUrl, api_token: 'glsa_viewer' } });

    it('an endpoint that is a refused literal address is refused when saved, naming the field', async () => {
      for (const url of [...literalLoopback(portOf(ctx.grafana.url)), ...OTHER_REFUSED.map(([url]) => url)]) {
        const created = await ctx.server.request('POST', '/sources', { token: ctx.owner.token, body: grafanaSource(`g-${Math.random()}`, url) });
        expect(created.status, url).toBe(422);
        expect(created.body.error).toMatchObject({ code: 'egress_refused', details: { field: 'config.base_url' } });
      }
    });

    it('a name resolving to loopback: a tool call gives the model egress_refused, /test answers 422 egress_refused (and the source then offers no tools); the fake sees nothing', async () => {
      const created = await ctx.server.request('POST', '/sources', {
        token: ctx.owner.token,
        body: grafanaSource('Grafana by name', `http://localhost:${portOf(ctx.grafana.url)}`),
      });
      expect(created.status).toBe(201);
      const before = ctx.grafana.requests.length;
      const org = asOrgId(ctx.owner.organization.id);
      const catalogNow = async () =>
        createCatalog(ctx.server.service.services.sourceService.registry, {
          sources: await ctx.server.service.services.sources.catalogSources(org, [created.body.id]),
        });
      // not validated yet: its tools are offered, and the guard refuses the call
      const resolved = (await catalogNow()).resolve('grafana.list_datasources', {});
      expect(resolved.ok).toBe(true);
      if (!resolved.ok) return;
      const outcome = await (await catalogNow()).run(resolved, { orgId: ctx.owner.organization.id, signal: new AbortController().signal });
      expect(outcome).toMatchObject({ error: { code: 'egress_refused', details: { address_class: 'loopback' } } });

      const tested = await ctx.server.request('GET', `/sources/${created.body.id}/test`, { token: ctx.owner.token });
      expect(tested.status).toBe(422);
      expect(tested.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback', host: 'localhost' } });
      const after = await ctx.server.request('GET', `/sources/${created.body.id}`, { token: ctx.owner.token });
      expect(after.body).toMatchObject({ status: 'failed', last_error: { code: 'egress_refused' } });
      // a source whose validation failed offers no tools until it validates again
      expect((await catalogNow()).resolve('grafana.list_datasources', {}).ok).toBe(false);
      expect(ctx.grafana.requests.length).toBe(before);
    });
  });

  describe('MCP bridge', () => {
    it('an MCP URL that is a refused literal is refused when saved; a name resolving to loopback fails /test with egress_refused', async () => {
      const port = portOf(ctx.mcp.url);
      const literal = await ctx.server.request('POST', '/sources', {
        token: ctx.owner.token,
        body: { name: 'mcp literal', connector: 'mcp', config: { transport: 'http', url: `http://[::1]:${port}/mcp` } },
      });
      expect(literal.body.error).toMatchObject({ code: 'egress_refused', details: { field: 'config.url', address_class: 'loopback' } });

      const created = await ctx.server.request('POST', '/sources', {
        token: ctx.owner.token,
        body: {
          name: 'mcp by name',
          connector: 'mcp',
          config: { transport: 'http', url: `http://localhost:${port}/mcp`, headers: { authorization: `Bearer ${ctx.mcp.token}` } },
        },
      });
      expect(created.status).toBe(201);
      const tested = await ctx.server.request('GET', `/sources/${created.body.id}/test`, { token: ctx.owner.token });
      expect(tested.status).toBe(422);
      expect(tested.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback' } });
      expect(ctx.mcp.calls).toHaveLength(0);
    });
  });

  describe("an organization's LLM base URL", () => {
    it('a refused literal is refused when saved; a name resolving to loopback fails the chat run before any request', async () => {
      const port = portOf(ctx.llm.url);
      for (const url of [`http://127.1:${port}/v1`, `http://2130706433:${port}/v1`, 'http://169.254.169.254/v1']) {
        const saved = await ctx.server.request('PATCH', '/settings', {
          token: ctx.owner.token,
          body: { llm_provider: 'openai', llm_model: 'gpt-4o-mini', llm_base_url: url, llm_api_key: 'sk-org-own-key' },
        });
        expect(saved.status, url).toBe(422);
        expect(saved.body.error).toMatchObject({ code: 'egress_refused', details: { field: 'llm_base_url' } });
      }

      const byName = { ...ctx.llm, baseUrl: () => `http://localhost:${port}/v1` } as FakeLlmServer;
      const org = await wireOrganization(ctx.server, byName);
      ctx.llm.script([{ text: 'never sent' }]);
      const before = ctx.llm.requests.length;
      const stream = await send(ctx.server, org, 'hello');
      await stream.ended;
      const failure = stream.events.find((event) => event.event === 'error');
      expect(failure?.data.message).toMatch(/egress_refused.*loopback/);
      expect(ctx.llm.requests.length).toBe(before);
      ctx.llm.reset();
    });
  });
});

/** a fake that answers every request with a redirect to `target()` + the same path */
async function startRedirector(host: string, target: () => string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => res.writeHead(302, { location: `${target()}${req.url ?? '/'}` }).end());
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/** a fake GitHub that only records who came and refuses the token */
async function startRecorder(host: string): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Bad credentials' }));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}`, hits };
}

describe('egress guard: redirects and what EGRESS_ALLOW opens', () => {
  let landing: Awaited<ReturnType<typeof startRecorder>>;
  let redirector: Awaited<ReturnType<typeof startRedirector>>;
  let grafana: FakeGrafanaServer;

  beforeAll(async () => {
    landing = await startRecorder('127.0.0.2');
    redirector = await startRedirector('127.0.0.1', () => landing.url);
    grafana = await startFakeGrafanaServer();
  });
  afterAll(async () => {
    await new Promise((resolve) => landing.server.close(resolve));
    await new Promise((resolve) => redirector.server.close(resolve));
    await grafana.close();
  });

  const githubSource = (baseUrl: string) => ({
    name: `gh-${Math.random()}`,
    connector: 'github',
    config: { auth: { kind: 'pat', token: 'ghp_redirected' }, base_url: baseUrl },
  });

  it('GitHub (an SDK that follows redirects): a redirect from the allowed 127.0.0.1 to 127.0.0.2 is refused, unsent', async () => {
    await withTestServer({ EGRESS_ALLOW: '127.0.0.1' }, async (server) => {
      const owner = await server.register();
      const created = await server.request('POST', '/sources', { token: owner.token, body: githubSource(redirector.url) });
      expect(created.status).toBe(201);
      const tested = await server.request('GET', `/sources/${created.body.id}/test`, { token: owner.token });
      expect(tested.status).toBe(422);
      expect(tested.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback', address: '127.0.0.2' } });
      expect(landing.hits).toEqual([]);
    });
  });

  it('a CIDR range opens both hops: the redirect is followed (the upstream answers, not the guard)', async () => {
    const server = await startTestServer({ EGRESS_ALLOW: '127.0.0.0/30' });
    try {
      const owner = await server.register();
      const created = await server.request('POST', '/sources', { token: owner.token, body: githubSource(redirector.url) });
      const tested = await server.request('GET', `/sources/${created.body.id}/test`, { token: owner.token });
      expectError(tested, 422, 'source_validation_failed');
      expect(landing.hits).toEqual(['GET /user']);
    } finally {
      landing.hits.length = 0;
      await server.stop();
    }
  });

  it('a host name opens that name only: localhost is reached, 127.0.0.1 is not', async () => {
    const server = await startTestServer({ EGRESS_ALLOW: 'localhost' });
    try {
      const owner = await server.register();
      const port = new URL(grafana.url).port;
      const byAddress = await server.request('POST', '/sources', {
        token: owner.token,
        body: { name: 'by address', connector: 'grafana', config: { base_url: `http://127.0.0.1:${port}`, api_token: 'glsa_x' } },
      });
      expect(byAddress.body.error).toMatchObject({ code: 'egress_refused', details: { address_class: 'loopback' } });
      const byName = await server.request('POST', '/sources', {
        token: owner.token,
        body: { name: 'by name', connector: 'grafana', config: { base_url: `http://localhost:${port}`, api_token: 'glsa_x' } },
      });
      const before = grafana.requests.length;
      const tested = await server.request('GET', `/sources/${byName.body.id}/test`, { token: owner.token });
      expect(tested.body.error?.code).not.toBe('egress_refused');
      expect(grafana.requests.length).toBeGreaterThan(before);
    } finally {
      await server.stop();
    }
  });
});
