/**
 * What users expect of permissions (issue 15): `X:manage` implies `X:read` and
 * `graph:write` implies `graph:read`, for custom roles and API keys alike,
 * and implication never grants more than the creator holds.
 */
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';

describe('implied permissions', () => {
  const ctx = useOneOrg({}, { name: 'Implied Org' });

  const keyWith = async (permissions: string[], token = ctx.owner.token): Promise<string> => {
    const created = await ctx.server.request('POST', '/api-keys', { token, body: { name: `k-${permissions.join('-')}`, permissions } });
    expect(created.status, created.text).toBe(201);
    return created.body.key as string;
  };

  it('a key with source:manage lists and reads sources; one with only source:read cannot create', async () => {
    const manage = await keyWith(['source:manage']);
    expect((await ctx.server.request('GET', '/sources', { token: manage })).status).toBe(200);
    expect((await ctx.server.request('GET', '/sources/catalog', { token: manage })).status).toBe(200);
    const read = await keyWith(['source:read']);
    expect((await ctx.server.request('GET', '/sources', { token: read })).status).toBe(200);
    const refused = await ctx.server.request('POST', '/sources', { token: read, body: { name: 'x', connector: 'github', config: {} } });
    expect(refused.status).toBe(403);
  });

  it('graph:write implies graph:read; task:manage, realm:manage and file:write imply their reads', async () => {
    const graphWrite = await keyWith(['graph:write']);
    expect((await ctx.server.request('GET', '/graph/search?query=x', { token: graphWrite })).status).toBe(200);
    expect((await ctx.server.request('GET', '/graph/stats', { token: graphWrite })).status).toBe(200);
    const tasks = await keyWith(['task:manage']);
    expect((await ctx.server.request('GET', '/tasks', { token: tasks })).status).toBe(200);
    const realms = await keyWith(['realm:manage']);
    expect((await ctx.server.request('GET', '/realms', { token: realms })).status).toBe(200);
    const files = await keyWith(['file:write']);
    expect((await ctx.server.request('GET', '/files', { token: files })).status).toBe(200);
    // nothing else comes along
    expect((await ctx.server.request('GET', '/sources', { token: graphWrite })).status).toBe(403);
    expect((await ctx.server.request('GET', '/realms', { token: tasks })).status).toBe(403);
  });

  it('a custom role with only manage permissions reads what it manages', async () => {
    const role = await ctx.server.request('POST', '/roles', {
      token: ctx.owner.token,
      body: { name: 'source-keeper', permissions: ['source:manage', 'webhook:manage', 'api_key:manage'] },
    });
    expect(role.status, role.text).toBe(201);
    const keeper = await addMember(ctx.server, ctx.owner, 'source-keeper');
    expect((await ctx.server.request('GET', '/sources', { token: keeper.token })).status).toBe(200);
    expect((await ctx.server.request('GET', '/webhooks', { token: keeper.token })).status).toBe(200);
    expect((await ctx.server.request('GET', '/realms', { token: keeper.token })).status).toBe(403);
    // a key the keeper makes with source:manage reads too, but never past the keeper's own rights
    const key = await keyWith(['source:manage'], keeper.token);
    expect((await ctx.server.request('GET', '/sources', { token: key })).status).toBe(200);
    expect((await ctx.server.request('POST', '/api-keys', { token: keeper.token, body: { name: 'wider', permissions: ['realm:read'] } })).status).toBe(403);
  });
});
