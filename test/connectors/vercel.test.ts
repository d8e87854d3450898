/** The vercel connector against the fake Vercel REST API. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createVercelPlugin } from '../../connectors/vercel/index.js';
import { startFakeVercel, type FakeVercelDeployment } from '../fakes/vercel/server.js';
import { RecordingGraphSink } from '../fixtures/github/seed.js';
import { failureOf, failureWhenThrottled, fakeConnector } from '../helpers/tools.js';

const validConfig: Record<string, unknown> = { token: 'vc_good_token', team_id: 'team_acme' };
const invalidConfig: Record<string, unknown> = { token: 'vc_revoked', team_id: 'team_acme' };
const T0 = Date.parse('2026-11-01T00:00:00Z');
const BUILD_LOG = [
  'Installing dependencies...',
  'added 812 packages in 14s',
  '> next build',
  "Error: Cannot find module './config'",
  'Error: Command "npm run build" exited with 1',
];

/** web: 130 deployments a minute apart; every 10th to production; #125 a failed production deploy, #127 a failed preview */
function webDeployments(): FakeVercelDeployment[] {
  return Array.from({ length: 130 }, (_, index) => {
    const failedProduction = index === 125;
    const failedPreview = index === 127;
    return {
      uid: `dpl_WEB${String(index).padStart(4, '0')}`,
      projectId: 'prj_web',
      target: index % 10 === 0 || failedProduction ? 'production' : null,
      state: failedProduction || failedPreview ? 'ERROR' : 'READY',
      created: T0 + index * 60_000,
      creator: index % 2 === 0 ? 'alice' : 'bob',
      branch: index % 10 === 0 || failedProduction ? 'main' : `feature-${index}`,
      sha: `sha${index}`,
      message: `change ${index}\n\ndetails`,
      ...(failedProduction ? { log: BUILD_LOG, errorMessage: 'Command "npm run build" exited with 1' } : {}),
      ...(failedPreview ? { log: ['Error: out of memory'], errorCode: 'BUILD_OOM', errorMessage: 'The build ran out of memory' } : {}),
    };
  });
}

const plugin = createVercelPlugin();
const { ctx, conformance, config, run, syncContext } = fakeConnector(
  plugin,
  async () => {
    const fake = await startFakeVercel();
    fake.tokens.set('vc_good_token', { username: 'ops', teams: ['team_acme'] });
    fake.tokens.set('vc_personal', { username: 'solo', teams: [] });
    fake.teams.add('team_acme').add('team_other');
    fake.projects.push(
      {
        id: 'prj_web',
        name: 'web',
        owner: 'team_acme',
        framework: 'nextjs',
        updatedAt: T0 + 3000,
        link: { type: 'github', org: 'acme', repo: 'web', productionBranch: 'main' },
      },
      {
        id: 'prj_api',
        name: 'api',
        owner: 'team_acme',
        framework: null,
        updatedAt: T0 + 2000,
        link: { type: 'github', org: 'acme', repo: 'api', productionBranch: 'main' },
      },
      { id: 'prj_docs', name: 'docs', owner: 'team_acme', framework: 'astro', updatedAt: T0 + 1000 },
      { id: 'prj_mine', name: 'mine', owner: 'user:solo', updatedAt: T0 },
    );
    fake.deployments.push(
      ...webDeployments(),
      { uid: 'dpl_API1', projectId: 'prj_api', target: 'production', state: 'READY', created: T0, creator: 'carol' },
      { uid: 'dpl_API2', projectId: 'prj_api', target: 'production', state: 'READY', created: T0 + 1000, creator: 'carol' },
      { uid: 'dpl_API3', projectId: 'prj_api', target: null, state: 'BUILDING', created: T0 + 2000, creator: 'dave' },
      { uid: 'dpl_MINE1', projectId: 'prj_mine', target: 'production', state: 'READY', created: T0, creator: 'solo' },
    );
    return fake;
  },
  'base_url',
  validConfig,
  invalidConfig,
);

conformance({
  toolCalls: [
    { tool: 'list_projects', args: {} },
    { tool: 'list_deployments', args: { project: 'api' } },
    { tool: 'latest_production_deployment', args: { project: 'api' } },
    { tool: 'failed_deployments', args: { project: 'web', limit: 1, log_lines: 2 } },
    { tool: 'build_logs', args: { deployment: 'dpl_WEB0125' } },
    { tool: 'redeploy', args: { deployment: 'dpl_API3' } },
    { tool: 'rollback', args: { project: 'api', deployment: 'dpl_API1' } },
    { tool: 'build_logs', args: { deployment: 'dpl_NOPE' }, expect: { error_code: 'not_found' } },
  ],
});

describe('vercel validate', () => {
  const signal = new AbortController().signal;

  it('accepts a token that reaches its team, and a personal token without a team', async () => {
    expect(await plugin.validate(config(), signal)).toEqual({ ok: true, details: { user: 'ops', team_id: 'team_acme' } });
    expect(await plugin.validate({ token: 'vc_personal', base_url: ctx.fake.url }, signal)).toMatchObject({
      ok: true,
      details: { user: 'solo', team_id: null },
    });
  });

  it('refuses a revoked token (Vercel answers 403 invalidToken), a team the token cannot reach, a missing token', async () => {
    expect(await plugin.validate(invalidConfig, signal)).toMatchObject({ ok: false, details: { reason: 'bad_credentials', status: 403 } });
    expect(await plugin.validate(config({ team_id: 'team_other' }), signal)).toMatchObject({
      ok: false,
      details: { reason: 'team_not_accessible', team_id: 'team_other', status: 403 },
    });
    expect(await plugin.validate(config({ team_id: 'team_ghost' }), signal)).toMatchObject({
      ok: false,
      details: { reason: 'team_not_accessible', status: 404 },
    });
    expect(await plugin.validate({ base_url: ctx.fake.url }, signal)).toMatchObject({
      ok: false,
      details: { reason: 'missing_fields', missing_fields: ['token'] },
    });
  });
});

describe('vercel tools', () => {
  beforeEach(() => ctx.fake.rateLimitNext(0));

  it("lists the team's projects with their Git repository, paging with pagination.next as from", async () => {
    const before = ctx.fake.requests.length;
    const result = await run('list_projects', { limit: 2 });
    expect(result.items.map((project: any) => [project.id, project.repository])).toEqual([
      ['prj_web', 'acme/web'],
      ['prj_api', 'acme/api'],
    ]);
    expect(result.truncated).toBe(true);
    const all = await run('list_projects', {});
    expect(all.items.map((project: any) => project.name)).toEqual(['web', 'api', 'docs']);
    expect(ctx.fake.requests.slice(before).every((request) => request.path.includes('teamId=team_acme'))).toBe(true);
  });

  it('pages deployments with pagination.next as until', async () => {
    const before = ctx.fake.requests.length;
    const result = await run('list_deployments', { project: 'web', limit: 130 });
    expect(result.items).toHaveLength(130);
    expect(result.items[0]).toMatchObject({
      id: 'dpl_WEB0129',
      project: 'web',
      target: 'preview',
      state: 'READY',
      branch: 'feature-129',
      commit_message: 'change 129',
      creator: 'bob',
    });
    expect(result.items.at(-1).id).toBe('dpl_WEB0000');
    const calls = ctx.fake.requests.slice(before).map((request) => new URL(request.path, 'http://x').searchParams);
    expect(calls.map((params) => params.get('until'))).toEqual([null, String(T0 + 30 * 60_000)]);
    const production = await run('list_deployments', { project: 'web', target: 'production', state: 'READY', limit: 3 });
    expect(production.items.map((deployment: any) => deployment.id)).toEqual(['dpl_WEB0120', 'dpl_WEB0110', 'dpl_WEB0100']);
  });

  it('tells the current production deployment from a newer failed attempt', async () => {
    const web = await run('latest_production_deployment', { project: 'web' });
    expect(web).toMatchObject({
      project: 'web',
      latest_failed: true,
      latest: { id: 'dpl_WEB0125', state: 'ERROR' },
      current: { id: 'dpl_WEB0120', state: 'READY' },
    });
    const api = await run('latest_production_deployment', { project: 'prj_api' });
    expect(api).toMatchObject({ latest_failed: false, latest: { id: 'dpl_API2' }, current: { id: 'dpl_API2' } });
    const none = await run('latest_production_deployment', { project: 'docs' });
    expect(none).toEqual({ project: 'docs', current: null, latest: null, latest_failed: false });
  });

  it('lists failed deployments with their error and the end of the build log', async () => {
    const result = await run('failed_deployments', { project: 'web', log_lines: 3 });
    expect(result.items.map((deployment: any) => [deployment.id, deployment.target, deployment.error_code, deployment.error_message])).toEqual([
      ['dpl_WEB0127', 'preview', 'BUILD_OOM', 'The build ran out of memory'],
      ['dpl_WEB0125', 'production', 'BUILD_FAILED', 'Command "npm run build" exited with 1'],
    ]);
    expect(result.items[1].log_tail).toEqual(['> next build', "Error: Cannot find module './config'", 'Error: Command "npm run build" exited with 1']);
    const productionOnly = await run('failed_deployments', { target: 'production', log_lines: 0 });
    expect(productionOnly.items.map((deployment: any) => [deployment.id, deployment.log_tail])).toEqual([['dpl_WEB0125', []]]);
  });

  it('reads the build log of a deployment', async () => {
    const logs = await run('build_logs', { deployment: 'dpl_WEB0125', lines: 100 });
    expect(logs.lines).toEqual(['Running "npm run build"', ...BUILD_LOG]);
  });

  it('redeploys from the same source, to the original target by default', async () => {
    const result = await run('redeploy', { deployment: 'dpl_WEB0125' });
    expect(result).toMatchObject({ redeploy_of: 'dpl_WEB0125', project: 'web', state: 'QUEUED', target: 'production' });
    const created = ctx.fake.deployments.find((deployment) => deployment.uid === result.id);
    expect(created).toMatchObject({ redeployOf: 'dpl_WEB0125', projectId: 'prj_web', target: 'production', creator: 'ops' });
    expect(
      ctx.fake.requests.some((request) => request.method === 'POST' && request.path.startsWith('/v13/deployments?') && request.path.includes('forceNew=1')),
    ).toBe(true);
    const preview = await run('redeploy', { deployment: 'dpl_WEB0120', target: 'preview' });
    expect(preview.target).toBe('preview');
  });

  it("rolls production back to an earlier READY production deployment; a wrong target is Vercel's readable error", async () => {
    const result = await run('rollback', { project: 'web', deployment: 'dpl_WEB0120', description: 'bad config in 125' });
    expect(result).toEqual({ project: 'web', rolled_back_to: 'dpl_WEB0120', requested: true });
    expect(ctx.fake.rollbacks.at(-1)).toEqual({ projectId: 'prj_web', deploymentId: 'dpl_WEB0120', description: 'bad config in 125' });
    const refused = await failureOf(run('rollback', { project: 'web', deployment: 'dpl_WEB0125' }));
    expect(refused).toMatchObject({ code: 'upstream_error', details: { status: 400, vercel_code: 'invalid_rollback_target' } });
    expect(refused.message).toContain('Only a READY production deployment');
  });

  it("keeps to the source's team: another owner's deployment is not found; a revoked token is unauthorized", async () => {
    expect(await failureOf(run('build_logs', { deployment: 'dpl_MINE1' }))).toMatchObject({
      code: 'not_found',
      details: { status: 404, vercel_code: 'not_found' },
    });
    expect(await failureOf(run('list_projects', {}, invalidConfig))).toMatchObject({ code: 'unauthorized', details: { status: 403 } });
  });

  it('retries a 429 after Retry-After, and fails with rate_limited_upstream when the wait is too long', async () => {
    ctx.fake.rateLimitNext(1, 1);
    const before = ctx.fake.requests.length;
    expect((await run('list_projects', {})).items).toHaveLength(3);
    expect(ctx.fake.requests.length - before).toBe(2);
    expect(await failureWhenThrottled(ctx.fake, () => run('list_projects', {}))).toMatchObject({
      code: 'rate_limited_upstream',
      details: { status: 429, retry_after_s: 3600 },
    });
  });
});

describe('vercel sync', () => {
  it('writes projects, their latest deployments and the Git repositories they deploy from', async () => {
    const graph = new RecordingGraphSink();
    const report = await plugin.sync!(syncContext(graph));
    expect(graph.keysOf('Project')).toEqual(['prj_api', 'prj_docs', 'prj_web']);
    expect(graph.nodes.get('Project:prj_web')?.properties).toMatchObject({
      name: 'web',
      framework: 'nextjs',
      repository: 'acme/web',
      production_branch: 'main',
      system: 'vercel',
    });
    // the latest 20 of web (plus any redeploys the tool tests created) and the 3 of api
    const webDeployments = graph.edges('HAS_DEPLOYMENT').filter((edge) => edge.startsWith('Project:prj_web'));
    expect(webDeployments).toHaveLength(20);
    expect(graph.relationships.get('Project:prj_api-[HAS_DEPLOYMENT]->Deployment:dpl_API2')?.properties).toEqual({ production: true });
    expect(graph.relationships.get('Project:prj_api-[HAS_DEPLOYMENT]->Deployment:dpl_API3')?.properties).toEqual({ production: false });
    expect(graph.nodes.get('Deployment:dpl_API3')?.properties).toMatchObject({ state: 'BUILDING', target: 'preview', project: 'api' });
    expect(graph.edges('DEPLOYS_FROM')).toEqual([
      'Project:prj_api-[DEPLOYS_FROM]->Repository:github.com/acme/api',
      'Project:prj_web-[DEPLOYS_FROM]->Repository:github.com/acme/web',
    ]);
    expect(graph.keysOf('Deployment')).not.toContain('dpl_MINE1');
    expect(report).toEqual({
      nodes: graph.nodes.size,
      relationships: graph.relationships.size,
      details: { projects: 3, deployments: graph.edges('HAS_DEPLOYMENT').length, projects_truncated: false },
    });
    // 20 of web, api's 3 and the redeploys of api the tool tests may have queued
    expect(graph.edges('HAS_DEPLOYMENT').length).toBeGreaterThanOrEqual(23);
  });

  it('reads without a graph store, and fails readably on a revoked token', async () => {
    expect((await plugin.sync!(syncContext(null))).details).toMatchObject({ projects: 3 });
    await expect(plugin.sync!(syncContext(new RecordingGraphSink(), invalidConfig))).rejects.toThrow(/Vercel sync failed: Vercel refused the token/);
  });
});
