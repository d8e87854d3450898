/** The jenkins connector against the fake Jenkins JSON API. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createJenkinsPlugin, jobPath } from '../../connectors/jenkins/index.js';
import { parseTree, startFakeJenkins, type FakeBuild } from '../fakes/jenkins/server.js';
import { RecordingGraphSink } from '../fixtures/github/seed.js';
import { failureOf, failureWhenThrottled, fakeConnector } from '../helpers/tools.js';

const validConfig: Record<string, unknown> = { username: 'robot', api_token: 'jt_good_token' };
const invalidConfig: Record<string, unknown> = { username: 'robot', api_token: 'jt_wrong' };
const T0 = Date.parse('2026-11-01T00:00:00Z');

/** api-build #1..#120: every 10th fails (started by a user), #117 unstable, #119 and #120 fail, the rest succeed on SCM changes */
function apiBuilds(): FakeBuild[] {
  return Array.from({ length: 120 }, (_, index) => {
    const number = index + 1;
    const failed = number % 10 === 0 || number >= 119;
    const result = failed ? 'FAILURE' : number === 117 ? 'UNSTABLE' : 'SUCCESS';
    return {
      number,
      result,
      timestamp: T0 + number * 3_600_000,
      duration: 95_000,
      causes: failed ? [{ kind: 'user', userId: 'alice', userName: 'Alice A' }] : [{ kind: 'scm' }],
      console:
        [
          ...Array.from({ length: 300 }, (_, line) => `[build ${number}] step ${line + 1}`),
          failed ? 'ERROR: 3 tests failed' : 'all good',
          `Finished: ${result}`,
        ].join('\n') + '\n',
    };
  });
}

const plugin = createJenkinsPlugin();
const { ctx, conformance, config, run, syncContext } = fakeConnector(
  plugin,
  async () => {
    const fake = await startFakeJenkins();
    fake.users.set('robot', { token: 'jt_good_token' });
    fake.users.set('guest', { token: 'jt_guest', read: false });
    fake.jobs.push(
      { name: 'api-build', kind: 'job', builds: apiBuilds() },
      {
        name: 'team',
        kind: 'folder',
        children: [
          {
            name: 'backend',
            kind: 'folder',
            children: [
              {
                name: 'deploy',
                kind: 'pipeline',
                parameters: ['BRANCH', 'DRY_RUN'],
                builds: [
                  {
                    number: 1,
                    result: 'SUCCESS',
                    timestamp: T0,
                    duration: 10_000,
                    causes: [{ kind: 'upstream', upstreamProject: 'api-build', upstreamBuild: 118 }],
                    console: 'deployed\nFinished: SUCCESS\n',
                  },
                  { number: 2, result: null, timestamp: T0 + 1000, duration: 0, causes: [{ kind: 'timer' }], console: 'deploying...\n' },
                ],
              },
            ],
          },
        ],
      },
      { name: 'nightly', kind: 'job' },
    );
    return fake;
  },
  'url',
  validConfig,
  invalidConfig,
);

conformance({
  toolCalls: [
    { tool: 'list_jobs', args: {} },
    { tool: 'list_builds', args: { job: 'api-build', only_failed: true, limit: 3 } },
    { tool: 'console_tail', args: { job: 'api-build', lines: 5 } },
    { tool: 'last_healthy_build', args: { job: 'api-build' } },
    { tool: 'trigger_build', args: { job: 'nightly' } },
    { tool: 'list_builds', args: { job: 'no/such/job' }, expect: { error_code: 'not_found' } },
  ],
});

describe('jenkins fake', () => {
  it('parses Jenkins tree expressions with nesting and ranges', () => {
    expect(parseTree('jobs[name,builds[number]{0,5}],x{3}')).toEqual([
      {
        name: 'jobs',
        range: null,
        children: [
          { name: 'name', children: null, range: null },
          { name: 'builds', children: [{ name: 'number', children: null, range: null }], range: [0, 5] },
        ],
      },
      { name: 'x', children: null, range: [3, 4] },
    ]);
  });
});

describe('jenkins validate', () => {
  it('accepts the user with its API token and reports the Jenkins version', async () => {
    expect(await plugin.validate(config(), new AbortController().signal)).toEqual({ ok: true, details: { user: 'robot', version: '2.462.3' } });
  });

  it('refuses a wrong token, a user without Overall/Read, missing fields, and a URL without Jenkins', async () => {
    const signal = new AbortController().signal;
    expect(await plugin.validate(invalidConfig, signal)).toMatchObject({ ok: false, details: { reason: 'bad_credentials', status: 401 } });
    expect(await plugin.validate(config({ username: 'guest', api_token: 'jt_guest' }), signal)).toMatchObject({
      ok: false,
      details: { reason: 'missing_permissions', missing_permissions: ['Overall/Read'] },
    });
    expect(await plugin.validate({ url: ctx.fake.url }, signal)).toMatchObject({
      ok: false,
      details: { reason: 'missing_fields', missing_fields: ['username', 'api_token'] },
    });
    expect(await plugin.validate(config({ url: 'http://127.0.0.1:9' }), signal)).toMatchObject({ ok: false, details: { reason: 'upstream_unreachable' } });
  });

  it('base_url sends the requests to a proxy while url names the instance', async () => {
    expect(await plugin.validate(config({ url: 'https://ci.example.com/', base_url: ctx.fake.url }), new AbortController().signal)).toMatchObject({ ok: true });
  });
});

describe('jenkins tools', () => {
  beforeEach(() => ctx.fake.rateLimitNext(0));

  it('builds folder paths as /job/a/job/b', () => {
    expect(jobPath('team/backend/deploy')).toBe('/job/team/job/backend/job/deploy');
    expect(jobPath('with space')).toBe('/job/with%20space');
  });

  it('lists jobs through folders with status and last build', async () => {
    const result = await run('list_jobs', { depth: 3 });
    expect(result.items.map((job: any) => [job.full_name, job.kind, job.status])).toEqual([
      ['api-build', 'job', 'red'],
      ['team', 'folder', null],
      ['team/backend', 'folder', null],
      ['team/backend/deploy', 'job', 'blue_anime'],
      ['nightly', 'job', 'notbuilt'],
    ]);
    expect(result.items[0].last_build).toEqual({ number: 120, result: 'FAILURE', started_at: new Date(T0 + 120 * 3_600_000).toISOString() });
    const shallow = await run('list_jobs', { depth: 1 });
    expect(shallow.items.map((job: any) => job.full_name)).toEqual(['api-build', 'team', 'nightly']);
    const inFolder = await run('list_jobs', { folder: 'team/backend' });
    expect(inFolder.items.map((job: any) => job.full_name)).toEqual(['team/backend/deploy']);
  });

  it('lists recent builds with their causes, newest first', async () => {
    const result = await run('list_builds', { job: 'api-build', limit: 3 });
    expect(result.items.map((build: any) => [build.number, build.result])).toEqual([
      [120, 'FAILURE'],
      [119, 'FAILURE'],
      [118, 'SUCCESS'],
    ]);
    expect(result.items[0]).toMatchObject({ duration_s: 95, causes: [{ description: 'Started by user Alice A', user_id: 'alice', user_name: 'Alice A' }] });
    expect(result.items[2].causes).toEqual([
      { description: 'Started by an SCM change', user_id: null, user_name: null, upstream_job: null, upstream_build: null },
    ]);
    const upstream = await run('list_builds', { job: 'team/backend/deploy' });
    expect(upstream.items.map((build: any) => [build.number, build.building, build.result])).toEqual([
      [2, true, null],
      [1, false, 'SUCCESS'],
    ]);
    expect(upstream.items[1].causes[0]).toMatchObject({ upstream_job: 'api-build', upstream_build: 118 });
  });

  it('pages failed builds with tree ranges {from,to} across the whole history', async () => {
    const before = ctx.fake.requests.length;
    const failed = await run('list_builds', { job: 'api-build', only_failed: true, limit: 50 });
    // #120, #119, then every 10th, and #117 unstable
    expect(failed.items.map((build: any) => build.number)).toEqual([120, 119, 117, 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10]);
    const ranges = ctx.fake.requests.slice(before).map((request) => /\{(\d+),(\d+)\}/.exec(decodeURIComponent(request.path))?.slice(1).join('-'));
    expect(ranges).toEqual(['0-50', '50-100', '100-150']);
  });

  it('tails the console of the last build (a permalink resolves to its number)', async () => {
    const tail = await run('console_tail', { job: 'api-build', lines: 3 });
    expect(tail).toEqual({
      job: 'api-build',
      build: 120,
      result: 'FAILURE',
      building: false,
      total_lines: 302,
      lines: ['[build 120] step 300', 'ERROR: 3 tests failed', 'Finished: FAILURE'],
    });
    const numbered = await run('console_tail', { job: 'team/backend/deploy', build: 2 });
    expect(numbered).toMatchObject({ build: 2, building: true, lines: ['deploying...'] });
    expect(await failureOf(run('console_tail', { job: 'api-build', build: 999 }))).toMatchObject({ code: 'not_found', details: { status: 404 } });
  });

  it('reports the last healthy builds and how many builds ran since', async () => {
    const health = await run('last_healthy_build', { job: 'api-build' });
    expect(health).toMatchObject({
      last_build: { number: 120, result: 'FAILURE' },
      last_successful_build: { number: 118, result: 'SUCCESS' },
      last_stable_build: { number: 118 },
      last_failed_build: { number: 120 },
      builds_since_success: 2,
    });
    const never = await run('last_healthy_build', { job: 'nightly' });
    expect(never).toEqual({
      job: 'nightly',
      last_build: null,
      last_successful_build: null,
      last_stable_build: null,
      last_failed_build: null,
      builds_since_success: null,
    });
  });

  it('triggers a parameterized build with the CSRF crumb and returns the queue item', async () => {
    const queued = await run('trigger_build', { job: 'team/backend/deploy', parameters: { BRANCH: 'release-7', DRY_RUN: true } });
    expect(queued).toMatchObject({ job: 'team/backend/deploy', queued: true, why: 'In the quiet period. Expires in 4.9 sec', build: null });
    expect(queued.queue_url).toBe(`${ctx.fake.url}/queue/item/${queued.queue_id}/`);
    expect(ctx.fake.queue.at(-1)).toEqual({
      id: queued.queue_id,
      job: 'team/backend/deploy',
      parameters: { BRANCH: 'release-7', DRY_RUN: 'true' },
      user: 'robot',
    });
    // a parameterized job cannot be started without parameters: Jenkins' 400 reaches the model
    expect(await failureOf(run('trigger_build', { job: 'team/backend/deploy' }))).toMatchObject({ code: 'upstream_error', details: { status: 400 } });
  });

  it('triggers without a crumb where CSRF protection is off', async () => {
    ctx.fake.csrf = false;
    try {
      const queued = await run('trigger_build', { job: 'nightly' });
      expect(ctx.fake.queue.at(-1)).toMatchObject({ id: queued.queue_id, job: 'nightly', parameters: {} });
    } finally {
      ctx.fake.csrf = true;
    }
  });

  it('a wrong token is unauthorized; a 429 from a proxy is retried after Retry-After', async () => {
    expect(await failureOf(run('list_jobs', {}, invalidConfig))).toMatchObject({ code: 'unauthorized', details: { status: 401 } });
    ctx.fake.rateLimitNext(1, 1);
    const before = ctx.fake.requests.length;
    const result = await run('last_healthy_build', { job: 'api-build' });
    expect(result.last_build.number).toBe(120);
    expect(ctx.fake.requests.length - before).toBe(2);
    expect(await failureWhenThrottled(ctx.fake, () => run('list_jobs', {}))).toMatchObject({
      code: 'rate_limited_upstream',
      details: { status: 429, retry_after_s: 3600 },
    });
  });
});

describe('jenkins sync', () => {
  it('writes jobs, folders, the latest builds, who triggered them and upstream builds', async () => {
    const graph = new RecordingGraphSink();
    const report = await plugin.sync!(syncContext(graph));
    const instance = new URL(ctx.fake.url).host;
    expect(graph.keysOf('Job')).toEqual(['api-build', 'nightly', 'team', 'team/backend', 'team/backend/deploy'].map((name) => `${instance}/${name}`));
    expect(graph.nodes.get(`Job:${instance}/team/backend/deploy`)?.properties).toMatchObject({ kind: 'job', status: 'blue_anime', system: 'jenkins' });
    // the latest 10 builds of api-build, 2 of deploy
    expect(graph.keysOf('Build')).toHaveLength(12);
    expect(graph.nodes.get(`Build:${instance}/api-build#120`)?.properties).toMatchObject({ number: 120, result: 'FAILURE', job: 'api-build', duration_s: 95 });
    expect(graph.edges('CONTAINS')).toEqual([
      `Job:${instance}/team-[CONTAINS]->Job:${instance}/team/backend`,
      `Job:${instance}/team/backend-[CONTAINS]->Job:${instance}/team/backend/deploy`,
    ]);
    expect(graph.edges('HAS_BUILD')).toHaveLength(12);
    // #111..#120 are the latest 10: alice started the failed #119 and #120
    expect(graph.edges('TRIGGERED')).toEqual([
      `User:${instance}/alice-[TRIGGERED]->Build:${instance}/api-build#119`,
      `User:${instance}/alice-[TRIGGERED]->Build:${instance}/api-build#120`,
    ]);
    expect(graph.edges('TRIGGERED_BY')).toEqual([`Build:${instance}/team/backend/deploy#1-[TRIGGERED_BY]->Build:${instance}/api-build#118`]);
    expect(report).toEqual({
      nodes: graph.nodes.size,
      relationships: graph.relationships.size,
      details: { jobs: 3, folders: 2, builds: 12, jobs_truncated: false },
    });
  });

  it('reads without a graph store, and fails readably on bad credentials', async () => {
    expect((await plugin.sync!(syncContext(null))).details).toMatchObject({ builds: 12 });
    await expect(plugin.sync!(syncContext(new RecordingGraphSink(), invalidConfig))).rejects.toThrow(
      /Jenkins sync failed: Jenkins refused the credentials \(401\)/,
    );
  });
});
