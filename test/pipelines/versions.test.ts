/** /pipelines versions and revert against the real server: history, revert as a new version, optimistic concurrency, isolation. */
import { describe, expect, it } from 'vitest';
import { useOneOrg } from '../helpers/suite.js';
import { expectStatus } from '../helpers/expect-status.js';

const ctx = useOneOrg({}, { name: 'Pipeline Versions Org' });

async function create(name = `v-${Math.random().toString(36).slice(2, 8)}`) {
  const created = await ctx.server.request('POST', '/pipelines', {
    token: ctx.owner.token,
    body: { name, description: 'first', definition: { steps: ['a'] }, message: 'initial' },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

describe('/pipelines/:id/versions', () => {
  it('records every create and change; lists newest first (paginated) and reads one', async () => {
    const id = await create();
    for (const steps of [
      ['a', 'b'],
      ['a', 'b', 'c'],
    ]) {
      const patched = await ctx.server.request('PATCH', `/pipelines/${id}`, {
        token: ctx.owner.token,
        body: { definition: { steps }, message: `steps ${steps.length}` },
      });
      expect(patched.status).toBe(200);
    }
    const first = await ctx.server.request('GET', `/pipelines/${id}/versions?limit=2`, { token: ctx.owner.token });
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(3);
    expect(first.body.items.map((item: { version: number }) => item.version)).toEqual([3, 2]);
    expect(first.body.items[0]).toMatchObject({ pipeline_id: id, definition: { steps: ['a', 'b', 'c'] }, message: 'steps 3', reverted_from: null });
    const rest = await ctx.server.request('GET', `/pipelines/${id}/versions?limit=2&cursor=${encodeURIComponent(first.body.next_cursor as string)}`, {
      token: ctx.owner.token,
    });
    expect(rest.body.items.map((item: { version: number }) => item.version)).toEqual([1]);
    expect(rest.body.next_cursor).toBeNull();
    const one = await ctx.server.request('GET', `/pipelines/${id}/versions/1`, { token: ctx.owner.token });
    expect(one.body).toMatchObject({ version: 1, name: expect.any(String), description: 'first', definition: { steps: ['a'] }, message: 'initial' });
    expect(one.body.created_by).toBe(ctx.owner.user.id);
    expect((await ctx.server.request('GET', `/pipelines/${id}/versions/9`, { token: ctx.owner.token })).status).toBe(404);
  });

  it('revert makes version n+1 with the old content; reverting to the current content still records one', async () => {
    const id = await create();
    await ctx.server.request('PATCH', `/pipelines/${id}`, { token: ctx.owner.token, body: { description: 'second', definition: { steps: ['x'] } } });
    const reverted = await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 1, message: 'x broke' } });
    expectStatus(reverted, 200).toMatchObject({ version: 3, description: 'first', definition: { steps: ['a'] } });
    expect(reverted.headers.get('etag')).toBe('"3"');
    const latest = await ctx.server.request('GET', `/pipelines/${id}/versions/3`, { token: ctx.owner.token });
    expect(latest.body).toMatchObject({ reverted_from: 1, message: 'x broke', definition: { steps: ['a'] } });
    const again = await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 3 } });
    expect(again.body).toMatchObject({ version: 4, definition: { steps: ['a'] } });
    expect((await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 42 } })).status).toBe(404);
    expect((await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 0 } })).status).toBe(400);
  });

  it('a stale expected_version or If-Match is 409 conflict; a current one passes', async () => {
    const id = await create();
    const stale = await ctx.server.request('PATCH', `/pipelines/${id}`, { token: ctx.owner.token, body: { description: 'x', expected_version: 5 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'conflict', details: { current_version: 1, expected_version: 5 } });
    const staleHeader = await ctx.server.request('PATCH', `/pipelines/${id}`, {
      token: ctx.owner.token,
      headers: { 'if-match': '"7"' },
      body: { description: 'x' },
    });
    expect(staleHeader.status).toBe(409);
    const staleRevert = await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 1, expected_version: 3 } });
    expect(staleRevert.status).toBe(409);
    const read = await ctx.server.request('GET', `/pipelines/${id}`, { token: ctx.owner.token });
    const fresh = await ctx.server.request('PATCH', `/pipelines/${id}`, {
      token: ctx.owner.token,
      headers: { 'if-match': read.headers.get('etag')! },
      body: { description: 'y' },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.body.version).toBe(2);
    const revert = await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: ctx.owner.token, body: { version: 1, expected_version: 2 } });
    expect(revert.body.version).toBe(3);
    // nothing was recorded by the refused changes
    expect((await ctx.server.request('GET', `/pipelines/${id}/versions`, { token: ctx.owner.token })).body.total).toBe(3);
  });

  it('two concurrent changes of one version: with expected_version one wins and one is 409; without, both land as n+1 and n+2', async () => {
    const id = await create();
    const raced = await Promise.all(
      ['x', 'y'].map((description) => ctx.server.request('PATCH', `/pipelines/${id}`, { token: ctx.owner.token, body: { description, expected_version: 1 } })),
    );
    expect(raced.map((response) => response.status).sort()).toEqual([200, 409]);
    const both = await Promise.all(
      ['p', 'q'].map((description) => ctx.server.request('PATCH', `/pipelines/${id}`, { token: ctx.owner.token, body: { description } })),
    );
    expect(both.map((response) => response.body.version as number).sort()).toEqual([3, 4]);
    const versions = await ctx.server.request('GET', `/pipelines/${id}/versions`, { token: ctx.owner.token });
    expect(versions.body.items.map((item: { version: number }) => item.version)).toEqual([4, 3, 2, 1]);
    expect((await ctx.server.request('GET', `/pipelines/${id}`, { token: ctx.owner.token })).body.version).toBe(4);
  });

  it("another organization's pipeline answers 404 on versions and revert; a delete takes the versions along", async () => {
    const id = await create();
    const other = await ctx.server.register('Other Versions Org');
    expect((await ctx.server.request('GET', `/pipelines/${id}/versions`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/pipelines/${id}/versions/1`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('POST', `/pipelines/${id}/revert`, { token: other.token, body: { version: 1 } })).status).toBe(404);
    expect((await ctx.server.request('DELETE', `/pipelines/${id}`, { token: ctx.owner.token })).status).toBe(204);
    const org = ctx.owner.organization.id as Parameters<typeof ctx.server.service.services.collections.pipelineVersions.count>[0];
    expect(await ctx.server.service.services.collections.pipelineVersions.count(org, { pipeline_id: id })).toBe(0);
  });
});
