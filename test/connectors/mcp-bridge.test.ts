/**
 * The MCP bridge: MCP servers (the SDK's, started by the test over stdio and
 * streamable HTTP) added as `mcp` sources through the real API; their tools
 * reach the catalog as `<source>.<tool>` and run through it.
 */
import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { createCatalog, type CatalogSource, type ToolCatalog } from '../../runtime/tools/catalog.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import { asOrgId } from '../../runtime/store/types.js';
import { FAKE_MCP_STDIO_SCRIPT, startFakeMcpHttp } from '../fakes/mcp/http-server.js';
import { oneOrg } from '../helpers/orgs.js';

describe('MCP bridge: an MCP server as a source', () => {
  const ctx = useSuite(async (own) => {
    const mcp = own(await startFakeMcpHttp());
    const { server, owner } = ownOrgs(own, await oneOrg({ MCP_STDIO_COMMANDS: process.execPath }, { name: 'MCP Org' }));
    return { mcp, server, alice: owner };
  });

  const create = async (body: Record<string, unknown>) => {
    const response = await ctx.server.request('POST', '/sources', { token: ctx.alice.token, body: { connector: 'mcp', ...body } });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: string; config: Record<string, unknown> };
  };
  const httpSource = (name: string, token = ctx.mcp.token) => ({
    name,
    config: { transport: 'http', url: ctx.mcp.url, headers: { authorization: `Bearer ${token}` } },
  });
  const stdioSource = (name: string, command = process.execPath) => ({
    name,
    config: { transport: 'stdio', command, args: ['--import', 'tsx', FAKE_MCP_STDIO_SCRIPT], env: { FAKE_MCP_SECRET: 'from-env-s3' } },
  });

  const catalogOf = async (ids: string[]): Promise<{ catalog: ToolCatalog; sources: CatalogSource[] }> => {
    const sources = await ctx.server.service.services.sources.catalogSources(asOrgId(ctx.alice.organization.id), ids);
    return { catalog: createCatalog(ctx.server.service.services.sourceService.registry, { sources }), sources };
  };
  const execute = async (catalog: ToolCatalog, name: string, args: unknown): Promise<ToolOutcome> => {
    const resolved = catalog.resolve(name, args);
    if (!resolved.ok) return { error: resolved.error };
    return catalog.run(resolved, { orgId: ctx.alice.organization.id, signal: new AbortController().signal });
  };

  it('is a source kind in the catalog, with its config schema and dynamic tools', async () => {
    const catalog = await ctx.server.request('GET', '/sources/catalog', { token: ctx.alice.token });
    expect(catalog.body.items.find((item: { kind: string }) => item.kind === 'mcp')).toMatchObject({
      dynamic_tools: true,
      supports_sync: false,
      tools: [],
      config_schema: { required: ['transport'] },
    });
  });

  it('a streamable HTTP server: headers masked, validated, tools listed across pages as <source>.<tool>', async () => {
    const source = await create(httpSource('Helpdesk'));
    expect(source.config).toEqual({ transport: 'http', url: ctx.mcp.url, headers: { authorization: '********' } });
    const tested = await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token });
    expect(tested.status).toBe(200);
    expect(tested.body.source.status).toBe('synced');

    const { catalog } = await catalogOf([source.id]);
    const tools = catalog.entries().filter((entry) => entry.source_id === source.id);
    expect(tools.map((tool) => [tool.name, tool.effect, tool.connector])).toEqual([
      ['helpdesk.always_fails', 'read', 'mcp'],
      ['helpdesk.create_ticket', 'write', 'mcp'],
      ['helpdesk.get_forecast', 'read', 'mcp'],
    ]);
    expect(tools.find((tool) => tool.name === 'helpdesk.get_forecast')?.input_schema).toMatchObject({ required: ['city'] });
    expect(catalog.search('weather forecast', 3)[0]?.name).toBe('helpdesk.get_forecast');
  });

  it('runs the tools: structured results, schema defaults, the original MCP name, isError as a tool error', async () => {
    const source = await create(httpSource('Support desk'));
    const { catalog } = await catalogOf([source.id]);
    expect(await execute(catalog, 'support_desk.get_forecast', { city: 'Oslo' })).toEqual({
      result: { city: 'Oslo', days: 1, sky: 'clear', high_c: 21, secret_env: null },
    });
    const ticket = await execute(catalog, 'support_desk.create_ticket', { title: 'printer' });
    expect(ticket).toEqual({ result: { content: [{ type: 'text', text: 'ticket T-1 opened: printer' }] } });
    expect(ctx.mcp.calls.at(-1)).toEqual({ name: 'create-ticket', args: { title: 'printer' } });
    const failed = await execute(catalog, 'support_desk.always_fails', {});
    expect(failed).toEqual({ error: { code: 'mcp_tool_error', message: 'the helpdesk is on fire' } });
    const invalid = await execute(catalog, 'support_desk.get_forecast', { days: 9 });
    expect('error' in invalid && invalid.error.code).toBe('invalid_arguments');
  });

  it('a refused token fails validation with 422 and the reason', async () => {
    const source = await create(httpSource('Locked', 'wrong'));
    const tested = await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token });
    expect(tested.status).toBe(422);
    expect(tested.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'mcp_unreachable' } });
    // its tools are absent from runs, not an error
    const { catalog } = await catalogOf([source.id]);
    expect(catalog.entries().filter((entry) => entry.source_id === source.id)).toEqual([]);
  });

  it('a stdio server: started with its env (masked on read), tools run through it', async () => {
    const source = await create(stdioSource('Local tools'));
    expect(source.config).toMatchObject({ transport: 'stdio', env: { FAKE_MCP_SECRET: '********' } });
    expect((await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token })).status).toBe(200);
    const { catalog } = await catalogOf([source.id]);
    expect(await execute(catalog, 'local_tools.get_forecast', { city: 'Rome', days: 2 })).toEqual({
      result: { city: 'Rome', days: 2, sky: 'clear', high_c: 21, secret_env: 'from-env-s3' },
    });
  });

  it('a stdio command the operator did not allow is refused', async () => {
    const source = await create(stdioSource('Shell', '/bin/sh'));
    const tested = await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token });
    expect(tested.status).toBe(422);
    expect(tested.body.error.details.reason).toBe('mcp_command_not_allowed');
    expect(tested.body.error.message).toContain('MCP_STDIO_COMMANDS');
  });

  it('has no sync: a sync answers 409 and a schedule is refused with 400', async () => {
    const source = await create(httpSource('No sync'));
    const sync = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
    expect(sync.status).toBe(409);
    expect(sync.body.error).toMatchObject({ code: 'conflict', details: { reason: 'sync_unsupported' } });
    const scheduled = await ctx.server.request('PATCH', `/sources/${source.id}`, { token: ctx.alice.token, body: { schedule: '0 6 * * *' } });
    expect(scheduled.status).toBe(400);
    expect(scheduled.body.error.details.issues[0]).toMatchObject({ path: 'schedule' });
  });

  it('a config without the transport field its mode needs is a 400', async () => {
    const response = await ctx.server.request('POST', '/sources', {
      token: ctx.alice.token,
      body: { name: 'No url', connector: 'mcp', config: { transport: 'http' } },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details.issues).toContainEqual({ path: 'config.url', message: 'is required' });
  });
});
