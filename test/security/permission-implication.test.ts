/**
 * What users expect of permissions (issue 15): `X:manage` implies `X:read` and
 * `graph:write` implies `graph:read`, for custom roles and API keys alike,
 * and implication never grants more than the creator holds.
 */
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { apiKeyWith, memberWithCustomRole } from '../helpers/members.js';

describe('implied permissions', () => {
  const ctx = useOneOrg({}, { name: 'Implied Org' });

  /** the status of GET on each path with this token, in order */
  const statuses = async (token: string, paths: readonly string[]): Promise<number[]> =>
    Promise.all(paths.map(async (path) => (await ctx.server.request('GET', path, { token })).status));

  const keyWith = (permissions: string[], token = ctx.owner.token): Promise<string> => apiKeyWith(ctx.server, token, permissions);

  it('a key with source:manage lists and reads sources; one with only source:read cannot create', async () => {
    const manage = await keyWith(['source:manage']);
    expect(await statuses(manage, ['/sources', '/sources/catalog'])).toEqual([200, 200]);
    const read = await keyWith(['source:read']);
    expect(await statuses(read, ['/sources'])).toEqual([200]);
    const refused = await ctx.server.request('POST', '/sources', { token: read, body: { name: 'x', connector: 'github', config: {} } });
    expect(refused.status).toBe(403);
  });

  it('graph:write implies graph:read; task:manage, realm:manage and file:write imply their reads', async () => {
    const graphWrite = await keyWith(['graph:write']);
    // each key reads what it writes; nothing else comes along
    expect(await statuses(graphWrite, ['/graph/search?query=x', '/graph/stats', '/sources'])).toEqual([200, 200, 403]);
    const tasks = await keyWith(['task:manage']);
    expect(await statuses(tasks, ['/tasks', '/realms'])).toEqual([200, 403]);
    const realms = await keyWith(['realm:manage']);
    expect(await statuses(realms, ['/realms'])).toEqual([200]);
    const files = await keyWith(['file:write']);
    expect(await statuses(files, ['/files'])).toEqual([200]);
  });

  it('a custom role with only manage permissions reads what it manages', async () => {
    const { member: keeper } = await memberWithCustomRole(ctx.server, ctx.owner, 'source-keeper', ['source:manage', 'webhook:manage', 'api_key:manage']);
    expect(await statuses(keeper.token, ['/sources', '/webhooks', '/realms'])).toEqual([200, 200, 403]);
    // a key the keeper makes with source:manage reads too, but never past the keeper's own rights
    const key = await keyWith(['source:manage'], keeper.token);
    expect(await statuses(key, ['/sources'])).toEqual([200]);
    expect((await ctx.server.request('POST', '/api-keys', { token: keeper.token, body: { name: 'wider', permissions: ['realm:read'] } })).status).toBe(403);
  });
});
