/** The github connector against the fake GitHub REST API, through @octokit/rest. */
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { createGithubPlugin, missingScopes } from '../../connectors/github/index.js';
import { loadPlugins } from '../../connectors/loader.js';
import { resolveExecuteConnectorTool } from '../../runtime/tools/meta-tools.js';
import { startFakeGithub } from '../fakes/github/server.js';
import { FINE_GRAINED_TOKEN, GOOD_TOKEN, NARROW_TOKEN, RecordingGraphSink, seedGithub } from '../fixtures/github/seed.js';
import { failureOf, failureWhenThrottled, fakeConnector } from '../helpers/tools.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
// GitHub hands App keys out as PKCS#1 ("BEGIN RSA PRIVATE KEY")
const APP_KEY_PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const INSTALLATION_TOKEN = 'ghs_installation_token_77';

/** filled in once the fake listens (the conformance kit reads it at test time) */
const validConfig: Record<string, unknown> = { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], repositories: [] };
const invalidConfig: Record<string, unknown> = { auth: { kind: 'pat', token: 'ghp_revoked' }, orgs: [], repositories: [] };

const plugin = createGithubPlugin();
const { ctx, conformance, config, run, syncContext } = fakeConnector(
  plugin,
  async () => {
    const fake = await startFakeGithub();
    seedGithub(fake);
    fake.app = { appId: '4242', publicKey, installations: { '99': INSTALLATION_TOKEN } };
    return fake;
  },
  'base_url',
  validConfig,
  invalidConfig,
);

conformance({
  toolCalls: [
    { tool: 'list_repositories', args: {}, expect: (outcome) => expect('result' in outcome && (outcome.result as any).items).toHaveLength(2) },
    { tool: 'list_pull_requests', args: { repo: 'acme/api', stale_days: 10 } },
    { tool: 'list_commits', args: { repo: 'acme/api', limit: 2 } },
    { tool: 'commit_authors', args: { repo: 'acme/api' } },
    { tool: 'list_workflow_runs', args: { repo: 'acme/api', status: 'failure' } },
    { tool: 'list_issues', args: { repo: 'acme/api' } },
    { tool: 'create_comment', args: { repo: 'acme/api', issue_number: 7, body: 'from the kit' } },
    { tool: 'list_issues', args: { repo: 'other/thing' }, expect: { error_code: 'repository_not_in_source' } },
  ],
});

describe('github validate', () => {
  it('accepts a classic token with the scopes, and a fine-grained token (no scopes header to check)', async () => {
    expect(await plugin.validate(config(), new AbortController().signal)).toEqual({ ok: true });
    expect(await plugin.validate(config({ auth: { kind: 'oauth', token: FINE_GRAINED_TOKEN } }), new AbortController().signal)).toEqual({ ok: true });
  });

  it('names the missing scopes of a classic token', async () => {
    const result = await plugin.validate(config({ auth: { kind: 'pat', token: NARROW_TOKEN } }), new AbortController().signal);
    expect(result).toMatchObject({
      ok: false,
      details: { reason: 'missing_scopes', missing_scopes: ['repo', 'read:org'], granted_scopes: ['public_repo', 'gist'] },
    });
    // read:org only matters when orgs are configured
    const noOrgs = await plugin.validate(
      config({ auth: { kind: 'pat', token: NARROW_TOKEN }, orgs: [], repositories: ['acme/web'] }),
      new AbortController().signal,
    );
    expect(noOrgs).toMatchObject({ ok: false, details: { missing_scopes: ['repo'] } });
    expect(missingScopes('admin:org, repo', ['repo', 'read:org'])).toEqual([]);
  });

  it('refuses a bad token, a missing token, and orgs or repositories the token cannot see', async () => {
    expect(await plugin.validate(invalidConfig, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'bad_credentials', status: 401, message: 'Bad credentials' },
    });
    expect(await plugin.validate(config({ auth: { kind: 'pat' } }), new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'missing_fields', missing_fields: ['auth.token'] },
    });
    const unseen = await plugin.validate(config({ orgs: ['acme', 'ghost-org'], repositories: ['acme/web', 'acme/secret'] }), new AbortController().signal);
    expect(unseen).toMatchObject({
      ok: false,
      details: { reason: 'inaccessible', inaccessible_orgs: ['ghost-org'], inaccessible_repositories: ['acme/secret'] },
    });
  });

  it('refuses an unreachable base_url with a reason', async () => {
    const result = await plugin.validate(config({ base_url: 'http://127.0.0.1:9/api/v3' }), new AbortController().signal);
    expect(result).toMatchObject({ ok: false, details: { reason: 'upstream_unreachable' } });
  });

  describe('GitHub App auth', () => {
    const app = (overrides: Record<string, unknown> = {}): Record<string, unknown> =>
      config({ auth: { kind: 'app', app_id: '4242', private_key: APP_KEY_PEM, installation_id: 99, ...overrides } });

    it('signs an RS256 JWT for GET /app, exchanges it for an installation token the tools then use', async () => {
      expect(await plugin.validate(app(), new AbortController().signal)).toEqual({ ok: true });
      const before = ctx.fake.requests.length;
      const result = await run('list_issues', { repo: 'acme/api' }, app());
      expect(result.items.map((issue: any) => issue.number)).toEqual([11, 12]);
      const issuesCall = ctx.fake.requests.slice(before).find((request) => request.path.startsWith('/api/v3/repos/acme/api/issues'));
      expect(issuesCall?.authorization).toBe(`token ${INSTALLATION_TOKEN}`);
    });

    it('refuses a key the App does not have, and an unknown installation', async () => {
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      expect(await plugin.validate(app({ private_key: other }), new AbortController().signal)).toMatchObject({
        ok: false,
        details: { reason: 'app_credentials_rejected', status: 401 },
      });
      expect(await plugin.validate(app({ installation_id: 1234 }), new AbortController().signal)).toMatchObject({
        ok: false,
        details: { reason: 'installation_not_found', installation_id: '1234' },
      });
      expect(await plugin.validate(app({ private_key: 'not a pem' }), new AbortController().signal)).toMatchObject({
        ok: false,
        details: { reason: 'invalid_private_key' },
      });
    });
  });
});

describe('github tools', () => {
  beforeEach(() => ctx.fake.rateLimitNext(0));

  it('lists stale pull requests (open, no update for N days) oldest first, with their age', async () => {
    const result = await run('list_pull_requests', { repo: 'acme/api', stale_days: 14, limit: 30 });
    expect(result.items.map((pr: any) => [pr.number, pr.author, pr.days_since_update])).toEqual([
      [7, 'carol', 40],
      [8, 'alice', 20],
      [9, 'bob', 15],
    ]);
    expect(result.items[0]).toMatchObject({
      title: 'forgotten refactor',
      labels: ['refactor'],
      state: 'open',
      base: 'main',
      url: 'https://github.com/acme/api/pull/7',
    });
    expect(result.truncated).toBe(false);
  });

  it('follows the Link header across pages and stops at the limit', async () => {
    const before = ctx.fake.requests.length;
    const all = await run('list_pull_requests', { repo: 'acme/api', limit: 300 });
    expect(all.items).toHaveLength(250);
    expect(new Set(all.items.map((pr: any) => pr.number)).size).toBe(250);
    const pages = ctx.fake.requests
      .slice(before)
      .filter((request) => request.path.includes('/pulls'))
      .map((request) => new URL(request.path, 'http://x').searchParams.get('page'));
    expect(pages).toEqual([null, '2', '3']);

    const mark = ctx.fake.requests.length;
    const some = await run('list_pull_requests', { repo: 'acme/api', limit: 120 });
    expect(some).toMatchObject({ truncated: true });
    expect(some.items).toHaveLength(120);
    // 120 items need two pages of 100, not three
    expect(ctx.fake.requests.slice(mark).filter((request) => request.path.includes('/pulls'))).toHaveLength(2);
  });

  it('lists commits with the first line of the message, and tallies commit authors', async () => {
    const commits = await run('list_commits', { repo: 'acme/api', since: '2026-11-01T00:00:00Z' });
    expect(commits.items.map((commit: any) => [commit.sha, commit.message, commit.author_login])).toEqual([
      ['a1', 'fix login', 'alice'],
      ['a2', 'add metrics', 'alice'],
      ['b1', 'bump deps', 'bob'],
      ['x1', 'hotfix from laptop', null],
    ]);
    const authors = await run('commit_authors', { repo: 'acme/api' });
    expect(authors).toMatchObject({ commits_counted: 5, truncated: false });
    expect(authors.authors).toEqual([
      { login: 'alice', name: 'Alice A', commits: 3, last_commit_at: '2026-11-20T09:00:00Z' },
      { login: 'bob', name: 'Bob B', commits: 1, last_commit_at: '2026-11-18T09:00:00Z' },
      { login: null, name: 'Eve Unlinked', commits: 1, last_commit_at: '2026-11-17T09:00:00Z' },
    ]);
  });

  it('lists failed workflow runs with the total GitHub reports', async () => {
    const failed = await run('list_workflow_runs', { repo: 'acme/api', status: 'failure' });
    expect(failed.total_count).toBe(2);
    expect(failed.items.map((r: any) => [r.id, r.workflow, r.branch, r.conclusion, r.actor])).toEqual([
      [501, 'CI', 'main', 'failure', 'alice'],
      [503, 'Deploy', 'release', 'failure', 'bob'],
    ]);
    const onMain = await run('list_workflow_runs', { repo: 'acme/api', branch: 'main' });
    expect(onMain.items.map((r: any) => r.id)).toEqual([501, 502]);
  });

  it('lists issues without the pull requests GitHub mixes in, filtered by labels and state', async () => {
    const open = await run('list_issues', { repo: 'acme/api' });
    expect(open.items.map((issue: any) => issue.number)).toEqual([11, 12]);
    expect(open.items[0]).toMatchObject({ assignees: ['alice'], labels: ['bug', 'p1'], comments: 3, author: 'carol' });
    const bugs = await run('list_issues', { repo: 'acme/api', state: 'all', labels: ['bug'] });
    expect(bugs.items.map((issue: any) => issue.number)).toEqual([11, 13]);
  });

  it('create_comment posts to the issue and returns the comment; an empty scope token is forbidden', async () => {
    const comment = await run('create_comment', { repo: 'acme/api', issue_number: 9, body: 'Friendly reminder: this needs a review.' });
    expect(comment.url).toMatch(/^https:\/\/github\.com\/acme\/api\/issues\/9#issuecomment-\d+$/);
    expect(ctx.fake.comments.at(-1)).toMatchObject({
      repo: 'acme/api',
      issue_number: 9,
      body: 'Friendly reminder: this needs a review.',
      user: 'octo-admin',
      id: comment.id,
    });
    const forbidden = await failureOf(
      run('create_comment', { repo: 'acme/api', issue_number: 9, body: 'x' }, config({ auth: { kind: 'pat', token: NARROW_TOKEN } })),
    );
    expect(forbidden).toMatchObject({ code: 'forbidden', details: { status: 403, message: 'Resource not accessible by personal access token' } });
  });

  it('maps upstream failures: unknown repository, bad token, repository outside the source', async () => {
    expect(await failureOf(run('list_commits', { repo: 'acme/nope' }))).toMatchObject({ code: 'not_found', details: { status: 404 } });
    expect(await failureOf(run('list_commits', { repo: 'acme/api' }, invalidConfig))).toMatchObject({ code: 'unauthorized', details: { status: 401 } });
    expect(await failureOf(run('list_commits', { repo: 'solo/dotfiles' }))).toMatchObject({ code: 'repository_not_in_source', details: { orgs: ['acme'] } });
    // a source without orgs or repositories reaches whatever the token can
    const unscoped = await run('list_repositories', {}, config({ orgs: [] }));
    expect(unscoped.items.map((repo: any) => repo.full_name)).toEqual(['acme/api', 'acme/web', 'solo/dotfiles']);
  });

  it('retries a 429 after Retry-After, and gives up with rate_limited_upstream when asked to wait too long', async () => {
    ctx.fake.rateLimitNext(1, 1);
    const before = ctx.fake.requests.length;
    const result = await run('list_issues', { repo: 'acme/api' });
    expect(result.items).toHaveLength(2);
    expect(ctx.fake.requests.slice(before).filter((request) => request.path.startsWith('/api/v3/repos/acme/api/issues'))).toHaveLength(2);

    expect(await failureWhenThrottled(ctx.fake, () => run('list_issues', { repo: 'acme/api' }))).toMatchObject({
      code: 'rate_limited_upstream',
      details: { status: 429 },
    });
  });
});

describe('github sync', () => {
  it('writes repositories, owners, contributors and open pull requests with their relationships', async () => {
    const graph = new RecordingGraphSink();
    const context = syncContext(graph, config({ repositories: ['solo/dotfiles'] }));
    const report = await plugin.sync!(context);
    const host = new URL(ctx.fake.url).host;
    expect(graph.keysOf('Repository')).toEqual([`${host}/acme/api`, `${host}/acme/web`, `${host}/solo/dotfiles`]);
    expect(graph.nodes.get(`Repository:${host}/acme/api`)?.properties).toMatchObject({
      full_name: 'acme/api',
      private: true,
      default_branch: 'main',
      system: 'github',
    });
    // 250 open in acme/api, capped at 200 per repository, plus 1 in acme/web
    expect(graph.keysOf('PullRequest')).toHaveLength(201);
    expect(graph.edges('OWNS')).toEqual([
      `User:${host}/acme-[OWNS]->Repository:${host}/acme/api`,
      `User:${host}/acme-[OWNS]->Repository:${host}/acme/web`,
      `User:${host}/solo-[OWNS]->Repository:${host}/solo/dotfiles`,
    ]);
    expect(graph.relationships.get(`User:${host}/dave-[AUTHORED]->PullRequest:${host}/acme/web#1`)).toBeDefined();
    expect(graph.relationships.get(`PullRequest:${host}/acme/web#1-[TARGETS]->Repository:${host}/acme/web`)?.properties).toEqual({ base: 'main' });
    expect(graph.nodes.get(`PullRequest:${host}/acme/web#1`)?.properties).toMatchObject({ number: 1, title: 'landing page', state: 'open' });
    expect(graph.relationships.get(`User:${host}/alice-[CONTRIBUTED_TO]->Repository:${host}/acme/api`)?.properties).toEqual({
      commits: 3,
      last_commit_at: '2026-11-20T09:00:00Z',
    });
    expect(graph.nodes.get(`User:${host}/acme`)?.properties).toMatchObject({ login: 'acme', type: 'Organization' });
    expect(report).toMatchObject({ details: { repositories: 3, pull_requests: 201, repositories_truncated: false, pull_requests_capped: ['acme/api'] } });
    expect(report.nodes).toBeGreaterThanOrEqual(graph.nodes.size);
    expect(report.relationships).toBe(graph.relationships.size);
    expect(context.progressed.at(-1)).toBe(1);
  });

  it('with no graph store it still reads everything and reports what it saw', async () => {
    const report = await plugin.sync!(syncContext(null));
    expect(report.details).toMatchObject({ repositories: 2, pull_requests: 201 });
    expect(report.nodes).toBeGreaterThan(200);
  });

  it('fails with a readable error on bad credentials', async () => {
    await expect(plugin.sync!(syncContext(new RecordingGraphSink(), invalidConfig))).rejects.toThrow(
      /GitHub sync failed: GitHub refused the credentials \(401\)/,
    );
  });
});

describe('github through the catalog', () => {
  it('is a built-in the loader accepts; its tools are <kind>.<tool>, create_comment a write; two sources are told apart', async () => {
    const registry = await loadPlugins({ builtins: [createGithubPlugin()] });
    const catalog = createCatalog(registry, {
      sources: [
        { id: 'src_a', kind: 'github', name: 'GitHub acme', config: config() },
        { id: 'src_b', kind: 'github', name: 'GitHub fine', config: config({ auth: { kind: 'pat', token: FINE_GRAINED_TOKEN } }) },
      ],
    });
    const names = [...new Set(catalog.entries().map((entry) => `${entry.name}:${entry.effect}`))].sort();
    expect(names).toContain('github.create_comment:write');
    expect(names).toContain('github.list_pull_requests:read');
    expect(catalog.search('stale pull requests without updates', 1)[0]?.name).toBe('github.list_pull_requests');

    const ambiguous = resolveExecuteConnectorTool(catalog, { tool: 'github.list_issues', arguments: { repo: 'acme/api' } });
    expect(ambiguous).toMatchObject({ ok: false, error: { code: 'ambiguous_tool' } });
    const resolved = resolveExecuteConnectorTool(catalog, { tool: 'github.list_issues', source_id: 'src_a', arguments: { repo: 'acme/api' } });
    if (!resolved.ok) throw new Error(JSON.stringify(resolved));
    const outcome = await catalog.run(resolved, { orgId: 'org_1', signal: new AbortController().signal });
    expect(outcome).toMatchObject({ result: { repo: 'acme/api', items: [{ number: 11 }, { number: 12 }] } });
    const invalid = resolveExecuteConnectorTool(catalog, { tool: 'github.list_issues', source_id: 'src_a', arguments: { repo: 'no-slash' } });
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });
});
