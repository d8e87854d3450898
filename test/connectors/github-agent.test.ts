/**
 * github end to end: a source created through /sources pointing at the fake
 * GitHub, validated, synced into the real graph store, and used by a chat run
 * whose fake LLM reads stale pull requests and posts a comment (a write that
 * waits for approval).
 */
import { describe, expect, it } from 'vitest';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { startFakeGithub } from '../fakes/github/server.js';
import { startWiredOrg } from '../helpers/llm.js';
import { decide, send, wireOrganization, execute } from '../runtime/chat-helpers.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { createSource, syncToEnd } from '../sources/helpers.js';

describe('github source through the service', () => {
  const ctx = useSuite(async (own) => {
    const fake = own(await startFakeGithub());
    seedGithub(fake);
    const started = ownLlm(own, await startWiredOrg({}, { approvalWrite: 'ask' }));
    return {
      ...started,
      fake,
      sourceId: await createSource(started.server, started.org.session.token, {
        name: 'GitHub acme',
        connector: 'github',
        config: { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: fake.url },
      }),
    };
  });

  it('is in the catalog with its config schema; the token is masked on read', async () => {
    const catalog = await ctx.server.request('GET', '/sources/catalog', { token: ctx.org.session.token });
    expect(catalog.status).toBe(200);
    const kinds = JSON.stringify(catalog.body);
    for (const kind of ['github', 'jenkins', 'vercel']) expect(kinds).toContain(`"${kind}"`);
    const read = await ctx.server.request('GET', `/sources/${ctx.sourceId}`, { token: ctx.org.session.token });
    expect(read.body.config.auth.token).toBe('********');
    expect(JSON.stringify(read.body)).not.toContain(GOOD_TOKEN);
    // another organization cannot see or test it
    const other = await ctx.server.register();
    expect((await ctx.server.request('GET', `/sources/${ctx.sourceId}`, { token: other.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/sources/${ctx.sourceId}/test`, { token: other.token })).status).toBe(404);
  });

  it('validates through GET /sources/:id/test, and a token without scopes fails with missing_scopes', async () => {
    const ok = await ctx.server.request('GET', `/sources/${ctx.sourceId}/test`, { token: ctx.org.session.token });
    expect(ok.status, ok.text).toBe(200);
    ctx.fake.tokens.set('ghp_scopeless', { login: 'scopeless', scopes: 'gist' });
    const narrow = await ctx.server.request('POST', '/sources', {
      token: ctx.org.session.token,
      body: { name: 'GitHub narrow', connector: 'github', config: { auth: { kind: 'pat', token: 'ghp_scopeless' }, orgs: ['acme'], base_url: ctx.fake.url } },
    });
    const refused = await ctx.server.request('GET', `/sources/${narrow.body.id}/test`, { token: ctx.org.session.token });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details: { missing_scopes: ['repo', 'read:org'] } });
    await ctx.server.request('DELETE', `/sources/${narrow.body.id}`, { token: ctx.org.session.token });
  });

  it('syncs repositories, owners and pull requests into the graph', async () => {
    const job = await syncToEnd(ctx.server, ctx.org.session.token, ctx.sourceId);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded', details: { repositories: 2 } });
    const host = new URL(ctx.fake.url).host;
    const node = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(`Repository:${host}/acme/api`)}`, { token: ctx.org.session.token });
    if (node.status === 503) {
      console.warn('graph store not available: the graph half of the sync test is skipped');
      return;
    }
    expect(node.status, node.text).toBe(200);
    expect(JSON.stringify(node.body)).toContain('acme/api');
    // another organization does not see it
    const other = await ctx.server.register();
    expect((await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(`Repository:${host}/acme/api`)}`, { token: other.token })).status).toBe(404);
  });

  it('a chat run reads stale pull requests and, once approved, comments on one', async () => {
    const before = ctx.fake.comments.length;
    ctx.llm.script([
      { tool_calls: [{ id: 'g1', ...execute('github.list_pull_requests', { repo: 'acme/api', stale_days: 14 }) }] },
      {
        tool_calls: [
          { id: 'g2', ...execute('github.create_comment', { repo: 'acme/api', issue_number: 7, body: 'This has waited 40 days: can someone review?' }) },
        ],
      },
      { text: 'Three pull requests are stale; I nudged #7.' },
    ]);
    const stream = await send(ctx.server, ctx.org, 'which pull requests in acme/api are stale? nudge the oldest');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('github.create_comment');
    expect(ctx.fake.comments.length).toBe(before);
    const decision = await decide(ctx.server, ctx.org, required.data.approval_id);
    expect(decision.status, decision.text).toBe(200);
    await stream.ended;

    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => event.data.result);
    expect(results[0].result.items.map((pr: any) => pr.number)).toEqual([7, 8, 9]);
    expect(results[1].result.url).toMatch(/acme\/api\/issues\/7#issuecomment-/);
    expect(ctx.fake.comments.at(-1)).toMatchObject({ repo: 'acme/api', issue_number: 7, body: 'This has waited 40 days: can someone review?' });
  });

  it("another organization's run does not see the source's tools", async () => {
    const other = await wireOrganization(ctx.server, ctx.llm, { approvalWrite: 'allow' });
    const before = ctx.fake.requests.length;
    ctx.llm.script([{ tool_calls: [{ id: 'x1', ...execute('github.list_issues', { repo: 'acme/api' }) }] }, { text: 'no such tool' }]);
    const stream = await send(ctx.server, other, 'list the issues of acme/api');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result;
    expect(result.error.code).toBe('unknown_tool');
    expect(ctx.fake.requests.length).toBe(before);
  });
});
