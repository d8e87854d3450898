/**
 * github end to end: a source created through /sources pointing at the fake
 * GitHub, validated, synced into the real graph store, and used by a chat run
 * whose fake LLM reads stale pull requests and posts a comment (a write that
 * waits for approval).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { send, wireOrganization, type ChatOrg, execute } from '../runtime/chat-helpers.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { syncToEnd } from '../sources/helpers.js';


describe('github source through the service', () => {
  let server: TestServer;
  let llm: FakeLlmServer;
  let fake: FakeGithub;
  let org: ChatOrg;
  let sourceId: string;

  beforeAll(async () => {
    fake = await startFakeGithub();
    seedGithub(fake);
    ({ server, llm, org } = await startWiredOrg({}, { approvalWrite: 'ask' }));
    const created = await server.request('POST', '/sources', {
      token: org.session.token,
      body: { name: 'GitHub acme', connector: 'github', config: { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: fake.url } },
    });
    expect(created.status, created.text).toBe(201);
    sourceId = created.body.id as string;
  });
  afterAll(async () => {
    await stopLlmServer({ server, llm });
    await fake.stop();
  });

  it('is in the catalog with its config schema; the token is masked on read', async () => {
    const catalog = await server.request('GET', '/sources/catalog', { token: org.session.token });
    expect(catalog.status).toBe(200);
    const kinds = JSON.stringify(catalog.body);
    for (const kind of ['github', 'jenkins', 'vercel']) expect(kinds).toContain(`"${kind}"`);
    const read = await server.request('GET', `/sources/${sourceId}`, { token: org.session.token });
    expect(read.body.config.auth.token).toBe('********');
    expect(JSON.stringify(read.body)).not.toContain(GOOD_TOKEN);
    // another organization cannot see or test it
    const other = await server.register();
    expect((await server.request('GET', `/sources/${sourceId}`, { token: other.token })).status).toBe(404);
    expect((await server.request('GET', `/sources/${sourceId}/test`, { token: other.token })).status).toBe(404);
  });

  it('validates through GET /sources/:id/test, and a token without scopes fails with missing_scopes', async () => {
    const ok = await server.request('GET', `/sources/${sourceId}/test`, { token: org.session.token });
    expect(ok.status, ok.text).toBe(200);
    fake.tokens.set('ghp_scopeless', { login: 'scopeless', scopes: 'gist' });
    const narrow = await server.request('POST', '/sources', {
      token: org.session.token,
      body: { name: 'GitHub narrow', connector: 'github', config: { auth: { kind: 'pat', token: 'ghp_scopeless' }, orgs: ['acme'], base_url: fake.url } },
    });
    const refused = await server.request('GET', `/sources/${narrow.body.id}/test`, { token: org.session.token });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details: { missing_scopes: ['repo', 'read:org'] } });
    await server.request('DELETE', `/sources/${narrow.body.id}`, { token: org.session.token });
  });

  it('syncs repositories, owners and pull requests into the graph', async () => {
    const job = await syncToEnd(server, org.session.token, sourceId);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded', details: { repositories: 2 } });
    const host = new URL(fake.url).host;
    const node = await server.request('GET', `/graph/nodes/${encodeURIComponent(`Repository:${host}/acme/api`)}`, { token: org.session.token });
    if (node.status === 503) {
      console.warn('graph store not available: the graph half of the sync test is skipped');
      return;
    }
    expect(node.status, node.text).toBe(200);
    expect(JSON.stringify(node.body)).toContain('acme/api');
    // another organization does not see it
    const other = await server.register();
    expect((await server.request('GET', `/graph/nodes/${encodeURIComponent(`Repository:${host}/acme/api`)}`, { token: other.token })).status).toBe(404);
  });

  it('a chat run reads stale pull requests and, once approved, comments on one', async () => {
    const before = fake.comments.length;
    llm.script([
      { tool_calls: [{ id: 'g1', ...execute('github.list_pull_requests', { repo: 'acme/api', stale_days: 14 }) }] },
      { tool_calls: [{ id: 'g2', ...execute('github.create_comment', { repo: 'acme/api', issue_number: 7, body: 'This has waited 40 days: can someone review?' }) }] },
      { text: 'Three pull requests are stale; I nudged #7.' },
    ]);
    const stream = await send(server, org, 'which pull requests in acme/api are stale? nudge the oldest');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('github.create_comment');
    expect(fake.comments.length).toBe(before);
    const decision = await server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${required.data.approval_id}`, {
      token: org.session.token,
      body: { approved: true },
    });
    expect(decision.status, decision.text).toBe(200);
    await stream.ended;

    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => event.data.result);
    expect(results[0].result.items.map((pr: any) => pr.number)).toEqual([7, 8, 9]);
    expect(results[1].result.url).toMatch(/acme\/api\/issues\/7#issuecomment-/);
    expect(fake.comments.at(-1)).toMatchObject({ repo: 'acme/api', issue_number: 7, body: 'This has waited 40 days: can someone review?' });
  });

  it("another organization's run does not see the source's tools", async () => {
    const other = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    const before = fake.requests.length;
    llm.script([{ tool_calls: [{ id: 'x1', ...execute('github.list_issues', { repo: 'acme/api' }) }] }, { text: 'no such tool' }]);
    const stream = await send(server, other, 'list the issues of acme/api');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result;
    expect(result.error.code).toBe('unknown_tool');
    expect(fake.requests.length).toBe(before);
  });
});
