/**
 * The service as an MCP server: the SDK's own client talks streamable HTTP
 * to /api/v1/mcp with an API key (or a JWT). The organization's source is
 * itself an MCP server (the fake), so read and write tools travel the whole
 * way: client -> /mcp -> catalog -> mcp source -> fake server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { createSource } from '../sources/helpers.js';
import { startFakeMcpHttp } from '../fakes/mcp/http-server.js';
import { oneOrg } from '../helpers/orgs.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

interface Outcome {
  result?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

describe('/mcp: the service as an MCP server', () => {
  const clients: Client[] = [];
  const ctx = useSuite(async (own) => {
    const fake = own(await startFakeMcpHttp());
    const { server, owner: alice } = ownOrgs(own, await oneOrg({}, { name: 'MCP Server Org' }));
    own(clients, async (list) => {
      for (const client of list) await client.close();
    });
    const sourceId = await createSource(server, alice.token, {
      name: 'Helpdesk',
      connector: 'mcp',
      config: { transport: 'http', url: fake.url, headers: { authorization: `Bearer ${fake.token}` } },
    });
    const key = await server.request('POST', '/api-keys', { token: alice.token, body: { name: 'ide', permissions: ['chat:use'] } });
    expect(key.status, key.text).toBe(201);
    return { server, fake, alice, sourceId, apiKey: key.body.key as string };
  });

  const connect = async (bearer: string): Promise<Client> => {
    const client = new Client({ name: 'test-ide', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ctx.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }),
    );
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<{ outcome: Outcome; isError: boolean }> => {
    const result = (await client.callTool({ name, arguments: args })) as { structuredContent?: Outcome; isError?: boolean };
    return { outcome: result.structuredContent ?? {}, isError: result.isError === true };
  };

  it('refuses a request without valid credentials with 401', async () => {
    const response = await ctx.server.request('POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expectError(response, 401, 'unauthorized');
    // RFC 6750's challenge, which MCP clients read to start authorization
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    const bad = await ctx.server.request('POST', '/mcp', { token: 'sk_wrong', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
    // the SDK's own client is refused the same way
    await expect(connect('sk_wrong')).rejects.toThrow(/401|nauthorized/);
    // every bearer route answers its 401 with the challenge, not only /mcp
    const realms = await ctx.server.request('GET', '/realms', { headers: { authorization: 'Basic abc' } });
    expect(realms.status).toBe(401);
    expect(realms.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
    // a wrong permission is 403 without a challenge
    const narrow = await ctx.server.request('GET', '/sources', { token: ctx.apiKey });
    expect(narrow.status).toBe(403);
    expect(narrow.headers.get('www-authenticate')).toBeNull();
  });

  it('lists the two meta-tools with read/write annotations', async () => {
    const client = await connect(ctx.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint])).toEqual([
      ['search_connector_tools', true, undefined],
      ['execute_connector_tool', false, true],
    ]);
    expect(tools[1]?.inputSchema.properties).toHaveProperty('approval_id');
  });

  it('searches the catalog and runs a read tool at once', async () => {
    const client = await connect(ctx.apiKey);
    const search = await call(client, 'search_connector_tools', { query: 'weather forecast' });
    const found = (search.outcome.result as { tools: { name: string; effect: string; source_id: string }[] }).tools;
    expect(found[0]).toMatchObject({ name: 'helpdesk.get_forecast', effect: 'read', source_id: ctx.sourceId });
    const read = await call(client, 'execute_connector_tool', { tool: 'helpdesk.get_forecast', arguments: { city: 'Lima' } });
    expect(read).toEqual({ isError: false, outcome: { result: { city: 'Lima', days: 1, sky: 'clear', high_c: 21, secret_env: null } } });
    const unknown = await call(client, 'execute_connector_tool', { tool: 'helpdesk.get_forcast', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(unknown.outcome.error?.code).toBe('unknown_tool');
  });

  it('leaves out the tools that act on an agent run (files artifacts), and keeps the other built-ins', async () => {
    const client = await connect(ctx.apiKey);
    const names = async (query: string): Promise<string[]> => {
      const search = await call(client, 'search_connector_tools', { query });
      expect(search.isError, JSON.stringify(search.outcome)).toBe(false);
      return (search.outcome.result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    };
    expect((await names('remember memory')).some((name) => name.startsWith('memory.'))).toBe(true);
    expect((await names('write artifact files report')).filter((name) => name.startsWith('files.'))).toEqual([]);
    const write = await call(client, 'execute_connector_tool', { tool: 'files.write_artifact', arguments: { path: 'x.txt', content: 'x' } });
    expect(write.outcome.error?.code).toBe('unknown_tool');
  });

  it('a write never runs silently: approval_required, a person approves over REST, the retry with approval_id runs it once', async () => {
    const client = await connect(ctx.apiKey);
    const callsBefore = ctx.fake.calls.length;
    const asked = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'VPN down' } });
    expect(asked.isError).toBe(true);
    expect(asked.outcome.error).toMatchObject({ code: 'approval_required', details: { tool: 'helpdesk.create_ticket', args: { title: 'VPN down' } } });
    expect(ctx.fake.calls.length).toBe(callsBefore);
    const approvalId = asked.outcome.error?.details?.['approval_id'] as string;

    const pending = await ctx.server.request('GET', '/mcp/approvals?status=pending', { token: ctx.alice.token });
    expect(pending.body.items).toContainEqual(
      expect.objectContaining({ id: approvalId, tool: 'helpdesk.create_ticket', status: 'pending', source_id: ctx.sourceId }),
    );

    const early = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'VPN down' }, approval_id: approvalId });
    expect(early.outcome.error?.code).toBe('approval_pending');

    // the API key cannot approve its own write
    const byKey = await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: ctx.apiKey, body: { approved: true } });
    expect(byKey.status).toBe(403);
    const approved = await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: ctx.alice.token, body: { approved: true } });
    expectStatus(approved, 200).toMatchObject({ status: 'approved', decided_by: ctx.alice.user.id });
    const twice = await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: ctx.alice.token, body: { approved: false } });
    expect(twice.status).toBe(409);

    const otherArgs = await call(client, 'execute_connector_tool', {
      tool: 'helpdesk.create_ticket',
      arguments: { title: 'something else' },
      approval_id: approvalId,
    });
    expect(otherArgs.outcome.error?.code).toBe('approval_mismatch');
    const ran = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'VPN down' }, approval_id: approvalId });
    expect(ran).toEqual({ isError: false, outcome: { result: { content: [{ type: 'text', text: 'ticket T-1 opened: VPN down' }] } } });
    expect(ctx.fake.calls.slice(callsBefore)).toEqual([{ name: 'create-ticket', args: { title: 'VPN down' } }]);
    const replay = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'VPN down' }, approval_id: approvalId });
    expect(replay.outcome.error?.code).toBe('approval_used');
    expect(ctx.fake.calls.length).toBe(callsBefore + 1);
  });

  it('a denied write is answered approval_denied; a JWT works as the bearer too', async () => {
    const client = await connect(ctx.alice.token);
    const asked = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'reboot prod' } });
    const approvalId = asked.outcome.error?.details?.['approval_id'] as string;
    expect((await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: ctx.alice.token, body: { approved: false } })).body.status).toBe(
      'denied',
    );
    const denied = await call(client, 'execute_connector_tool', {
      tool: 'helpdesk.create_ticket',
      arguments: { title: 'reboot prod' },
      approval_id: approvalId,
    });
    expect(denied.outcome.error?.code).toBe('approval_denied');
  });

  it('an approval nobody answers within approval_timeout_secs expires', async () => {
    expect((await ctx.server.request('PATCH', '/settings', { token: ctx.alice.token, body: { approval_timeout_secs: 1 } })).status).toBe(200);
    try {
      const client = await connect(ctx.apiKey);
      const asked = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'late' } });
      const approvalId = asked.outcome.error?.details?.['approval_id'] as string;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const late = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'late' }, approval_id: approvalId });
      expect(late.outcome.error?.code).toBe('approval_timeout');
      const decided = await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: ctx.alice.token, body: { approved: true } });
      expect(decided.status).toBe(409);
      expect(decided.body.error.details).toEqual({ status: 'expired' });
    } finally {
      await ctx.server.request('PATCH', '/settings', { token: ctx.alice.token, body: { approval_timeout_secs: 900 } });
    }
  });

  it('an API key scoped to other sources does not see this one', async () => {
    const scoped = await ctx.server.request('POST', '/api-keys', {
      token: ctx.alice.token,
      body: { name: 'narrow', permissions: ['chat:use'], source_ids: ['src_other'] },
    });
    expect(scoped.status, scoped.text).toBe(201);
    const client = await connect(scoped.body.key);
    const search = await call(client, 'search_connector_tools', { query: 'forecast ticket' });
    const names = (search.outcome.result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(names.some((name) => name.startsWith('helpdesk.'))).toBe(false);
  });

  it("approvals of another organization are 404, and its MCP clients never see this organization's sources", async () => {
    const client = await connect(ctx.apiKey);
    const asked = await call(client, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'cross org' } });
    const approvalId = asked.outcome.error?.details?.['approval_id'] as string;
    const bob = await ctx.server.register('Other MCP Org');
    const stolen = await ctx.server.request('POST', `/mcp/approvals/${approvalId}`, { token: bob.token, body: { approved: true } });
    expect(stolen.status).toBe(404);
    expect((await ctx.server.request('GET', '/mcp/approvals', { token: bob.token })).body.items).toEqual([]);
    const bobClient = await connect(bob.token);
    const search = await call(bobClient, 'search_connector_tools', { query: 'forecast' });
    expect((search.outcome.result as { tools: { name: string }[] }).tools.map((tool) => tool.name)).not.toContain('helpdesk.get_forecast');
    const run = await call(bobClient, 'execute_connector_tool', { tool: 'helpdesk.create_ticket', arguments: { title: 'cross org' }, approval_id: approvalId });
    expect(run.outcome.error?.code).toBe('unknown_tool');
  });

  it('validates the approval body', async () => {
    const response = await ctx.server.request('POST', '/mcp/approvals/mapr_x', { token: ctx.alice.token, body: { approved: 'yes' } });
    expectError(response, 400, 'validation_error');
  });
});
