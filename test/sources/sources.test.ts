/**
 * /sources against the real server, with a tracker connector (fixture plugin
 * loaded through PLUGINS_FILE) talking HTTP to a fake tracker.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownPluginsFile, useSuite } from '../helpers/suite.js';
import type { PlatformEvent } from '../../runtime/events.js';
import { asOrgId } from '../../runtime/store/types.js';
import { addMember } from '../helpers/members.js';
import { startTestServer } from '../helpers/server.js';
import { startFakeTracker } from '../fakes/tracker/server.js';
import { eventually } from '../helpers/eventually.js';
import { jobEnds } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/connectors/${name}`, import.meta.url));

describe('/sources', () => {
  const events: PlatformEvent[] = [];
  const ctx = useSuite(async (own) => {
    const tracker = own(await startFakeTracker());
    const server = own(await startTestServer({ PLUGINS_FILE: ownPluginsFile(own, [fixture('tracker-plugin.ts'), fixture('broken-plugin.ts')]) }));
    server.service.services.events.subscribe((event) => void events.push(event));
    return { tracker, server, alice: await server.register('Sources Inc') };
  });
  const create = (body: Record<string, unknown>, token = ctx.alice.token) => ctx.server.request('POST', '/sources', { token, body });
  const trackerSource = (name: string, token = 'good-token') => ({
    name,
    connector: 'tracker',
    config: { base_url: ctx.tracker.url, token, project: 'web' },
  });

  it('the catalog lists connector kinds with config schemas and tools, and names plugins refused at start', async () => {
    const catalog = await ctx.server.request('GET', '/sources/catalog', { token: ctx.alice.token });
    expect(catalog.status).toBe(200);
    const kind = catalog.body.items.find((item: { kind: string }) => item.kind === 'tracker');
    expect(kind).toMatchObject({
      version: '1.0.0',
      supports_sync: true,
      dynamic_tools: false,
      config_schema: { required: ['base_url', 'token', 'project'] },
      tools: [{ name: 'tracker.list_issues', effect: 'read' }],
    });
    // sourceless built-ins (memory) are not source kinds
    expect(catalog.body.items.map((item: { kind: string }) => item.kind)).not.toContain('memory');
    const broken = catalog.body.problems.find((problem: { origin: string }) => problem.origin.endsWith('broken-plugin.ts'));
    expect(broken.problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('kind must match'),
        expect.stringContaining('version "one" is not semver'),
        expect.stringContaining('description must be a non-empty string'),
        expect.stringContaining('configSchema does not compile'),
      ]),
    );
  });

  it('creates a source: config masked on read, sealed at rest, status pending', async () => {
    const created = await create({ ...trackerSource('Tracker main'), schedule: '0 6 * * 1-5' });
    expectStatus(created, 201).toMatchObject({
      name: 'Tracker main',
      connector: 'tracker',
      realm: 'default',
      status: 'pending',
      schedule: '0 6 * * 1-5',
      visibility: 'organization',
      last_error: null,
      last_synced_at: null,
      config: { base_url: ctx.tracker.url, token: '********', project: 'web' },
    });
    expect(created.body.id).toMatch(/^src_/);
    expect(new Date(created.body.next_sync_at).getUTCHours()).toBe(6);
    const read = await ctx.server.request('GET', `/sources/${created.body.id}`, { token: ctx.alice.token });
    expect(read.body.config.token).toBe('********');
    expect(read.text).not.toContain('good-token');
    const listed = await ctx.server.request('GET', '/sources', { token: ctx.alice.token });
    expect(listed.body.items.map((item: { id: string }) => item.id)).toContain(created.body.id);
    expect(listed.text).not.toContain('good-token');
    // nothing in the data directory holds the token in clear
    const files = readdirSync(ctx.server.dataDir).filter((file) => file.startsWith('metadata'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(readFileSync(join(ctx.server.dataDir, file)).includes('good-token')).toBe(false);
  });

  it('refuses bad input with 400 naming the field, and a duplicate name with 409', async () => {
    const unknownKind = await create({ name: 'x', connector: 'nope', config: {} });
    expect(unknownKind.status).toBe(400);
    expect(unknownKind.body.error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'connector' }] } });
    expect(unknownKind.body.error.message).toContain('tracker');

    const badConfig = await create({ name: 'x', connector: 'tracker', config: { base_url: 'not a url', project: 'web', extra: 1 } });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'config.base_url',
      'config.extra',
      'config.token',
    ]);

    const badSchedule = await create({ ...trackerSource('x'), schedule: '61 * * * *' });
    expect(badSchedule.status).toBe(400);
    expect(badSchedule.body.error.details.issues[0].path).toBe('schedule');

    const badRealm = await create({ ...trackerSource('x'), realm: 'nowhere' });
    expect(badRealm.status).toBe(400);
    expect(badRealm.body.error.details.issues[0].path).toBe('realm');

    const missing = await create({ name: 'x', connector: 'tracker' });
    expect(missing.status).toBe(400);

    expect((await create(trackerSource('Dup'))).status).toBe(201);
    const duplicate = await create(trackerSource('Dup'));
    expectError(duplicate, 409, 'conflict');
  });

  it('validation: bad credentials and missing scopes are 422 source_validation_failed with details; good ones list the source as synced', async () => {
    const bad = (await create(trackerSource('Bad creds', 'wrong-token'))).body;
    const refused = await ctx.server.request('GET', `/sources/${bad.id}/test`, { token: ctx.alice.token });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'bad_credentials', source_id: bad.id } });
    const afterBad = await ctx.server.request('GET', `/sources/${bad.id}`, { token: ctx.alice.token });
    expect(afterBad.body).toMatchObject({ status: 'failed', last_error: { code: 'source_validation_failed' } });

    const narrow = (await create(trackerSource('Narrow', 'narrow-token'))).body;
    const scopes = await ctx.server.request('GET', `/sources/${narrow.id}/test`, { token: ctx.alice.token });
    expect(scopes.status).toBe(422);
    expect(scopes.body.error.details.missing_scopes).toEqual(['issues:read']);

    const good = (await create(trackerSource('Good'))).body;
    const passed = await ctx.server.request('GET', `/sources/${good.id}/test`, { token: ctx.alice.token });
    expectStatus(passed, 200).toMatchObject({ ok: true, source: { status: 'synced', last_error: null } });
    expect(passed.body.source.last_validated_at).not.toBeNull();
  });

  it('an unreachable system fails validation with the reason', async () => {
    const gone = (await create({ ...trackerSource('Gone'), config: { base_url: 'http://127.0.0.1:1', token: 't', project: 'p' } })).body;
    const refused = await ctx.server.request('GET', `/sources/${gone.id}/test`, { token: ctx.alice.token });
    expectError(refused, 422, 'source_validation_failed');
    expect(refused.body.error.details.reason).toBe('sync_failed');
  });

  it('PATCH keeps masked secrets, returns a changed config to pending, and keeps connector immutable', async () => {
    const source = (await create(trackerSource('Patchable'))).body;
    expect((await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token })).status).toBe(200);
    // the masked token sent back unchanged keeps the stored one: validation still passes
    const renamed = await ctx.server.request('PATCH', `/sources/${source.id}`, { token: ctx.alice.token, body: { name: 'Patched', config: source.config } });
    expectStatus(renamed, 200).toMatchObject({ name: 'Patched', status: 'synced', config: { token: '********' } });
    expect((await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token })).status).toBe(200);

    const retokened = await ctx.server.request('PATCH', `/sources/${source.id}`, {
      token: ctx.alice.token,
      body: { config: { ...source.config, token: 'wrong-token' } },
    });
    expect(retokened.body.status).toBe('pending');
    expect((await ctx.server.request('GET', `/sources/${source.id}/test`, { token: ctx.alice.token })).status).toBe(422);

    const immutable = await ctx.server.request('PATCH', `/sources/${source.id}`, { token: ctx.alice.token, body: { connector: 'other' } });
    expectError(immutable, 400, 'immutable_field');
  });

  it('sync runs as a job: 202, 409 while running, then succeeded with counts, history and a source.synced event', async () => {
    const source = (await create(trackerSource('Syncing'))).body;
    const release = ctx.tracker.hold();
    const started = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
    expectStatus(started, 202).toMatchObject({ source_id: source.id, status: 'running', trigger: 'manual' });
    expect(started.headers.get('location')).toBe(`/api/v1/sources/${source.id}/jobs/${started.body.id}`);
    const again = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { job_id: started.body.id } });
    expect((await ctx.server.request('GET', `/sources/${source.id}`, { token: ctx.alice.token })).body.status).toBe('syncing');
    const deleting = await ctx.server.request('DELETE', `/sources/${source.id}`, { token: ctx.alice.token });
    expect(deleting.status).toBe(409);
    release();

    const job = await jobEnds(ctx.server, ctx.alice.token, source.id, started.body.id);
    expect(job).toMatchObject({ status: 'succeeded', nodes: 3, relationships: 0, progress: 1, details: { issues: 3 }, error: null });
    expect(job.finished_at).not.toBeNull();
    const after = await ctx.server.request('GET', `/sources/${source.id}`, { token: ctx.alice.token });
    expect(after.body.status).toBe('synced');
    expect(after.body.last_synced_at).not.toBeNull();
    // the sync wrote what it found into the context graph, in the source's realm
    const node = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent('Issue:1')}?realm=default`, { token: ctx.alice.token });
    expect(node.status, node.text).toBe(200);
    expect(node.body.properties).toMatchObject({ title: 'Login fails' });
    const history = await ctx.server.request('GET', `/sources/${source.id}/jobs`, { token: ctx.alice.token });
    expect(history.body).toMatchObject({ total: 1, items: [{ id: started.body.id, status: 'succeeded' }] });
    await ctx.server.service.services.sourceService.settled(source.id);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.find((event) => event.type === 'source.synced' && event.data['source_id'] === source.id)).toMatchObject({
      orgId: ctx.alice.organization.id,
      data: { connector: 'tracker', job_id: started.body.id, nodes: 3 },
    });
  });

  it('a failing sync marks the job and the source failed and emits source.sync_failed', async () => {
    const source = (await create(trackerSource('Breaking'))).body;
    ctx.tracker.failWith = 502;
    try {
      const started = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
      const job = await jobEnds(ctx.server, ctx.alice.token, source.id, started.body.id);
      expect(job).toMatchObject({ status: 'failed', error: { code: 'upstream_error', details: { status: 502 } } });
      const after = await ctx.server.request('GET', `/sources/${source.id}`, { token: ctx.alice.token });
      expect(after.body).toMatchObject({ status: 'failed', last_error: { code: 'upstream_error' } });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events.some((event) => event.type === 'source.sync_failed' && event.data['source_id'] === source.id)).toBe(true);
    } finally {
      ctx.tracker.failWith = null;
    }
  });

  it('a schedule fires syncs on its own (UTC cron), and an empty schedule disarms it', async () => {
    const service = ctx.server.service.services.sourceService;
    const before = service.scheduledSources;
    const source = (await create({ ...trackerSource('Every second'), schedule: '* * * * * *' })).body;
    expect(service.scheduledSources).toBe(before + 1);
    await eventually(
      async () => {
        const jobs = await ctx.server.request('GET', `/sources/${source.id}/jobs`, { token: ctx.alice.token });
        return jobs.body.items.some((job: { trigger: string; status: string }) => job.trigger === 'schedule' && job.status === 'succeeded') || undefined;
      },
      { what: 'a scheduled sync to succeed', timeout: 25_000 },
    );
    const disarmed = await ctx.server.request('PATCH', `/sources/${source.id}`, { token: ctx.alice.token, body: { schedule: '' } });
    expect(disarmed.body).toMatchObject({ schedule: '', next_sync_at: null });
    expect(service.scheduledSources).toBe(before);
    await service.settled(source.id);
  });

  it('runs see organization sources; restricted ones only when named (scoped API keys, tasks)', async () => {
    const open = (await create(trackerSource('Visible'))).body;
    const restricted = (await create({ ...trackerSource('Hidden'), visibility: 'restricted' })).body;
    const directory = ctx.server.service.services.sources;
    const org = asOrgId(ctx.alice.organization.id);
    const all = await directory.catalogSources(org, null);
    expect(all.map((source) => source.id)).toContain(open.id);
    expect(all.map((source) => source.id)).not.toContain(restricted.id);
    const named = await directory.catalogSources(org, [restricted.id]);
    expect(named).toEqual([{ id: restricted.id, kind: 'tracker', name: 'Hidden', config: { base_url: ctx.tracker.url, token: 'good-token', project: 'web' } }]);
    expect(await directory.catalogSources(org, [])).toEqual([]);
  });

  it('permissions: a viewer reads but cannot create, test or sync', async () => {
    const viewer = await addMember(ctx.server, ctx.alice, 'viewer');
    const source = (await create(trackerSource('For viewer'))).body;
    expect((await ctx.server.request('GET', `/sources/${source.id}`, { token: viewer.token })).status).toBe(200);
    expect((await create(trackerSource('By viewer'), viewer.token)).status).toBe(403);
    expect((await ctx.server.request('GET', `/sources/${source.id}/test`, { token: viewer.token })).status).toBe(403);
    expect((await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: viewer.token })).status).toBe(403);
    expect((await ctx.server.request('GET', '/sources')).status).toBe(401);
  });

  it('another organization gets 404 on every route of a source, and never sees it in runs', async () => {
    const source = (await create(trackerSource('Private to alice'))).body;
    const started = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
    await jobEnds(ctx.server, ctx.alice.token, source.id, started.body.id);
    const bob = await ctx.server.register('Other Org');
    for (const [method, path] of [
      ['GET', `/sources/${source.id}`],
      ['PATCH', `/sources/${source.id}`],
      ['DELETE', `/sources/${source.id}`],
      ['GET', `/sources/${source.id}/test`],
      ['POST', `/sources/${source.id}/sync`],
      ['GET', `/sources/${source.id}/jobs`],
      ['GET', `/sources/${source.id}/jobs/${started.body.id}`],
    ] as const) {
      const response = await ctx.server.request(method, path, { token: bob.token, ...(method === 'PATCH' ? { body: { name: 'stolen' } } : {}) });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await ctx.server.request('GET', '/sources', { token: bob.token })).body.total).toBe(0);
    expect(await ctx.server.service.services.sources.catalogSources(asOrgId(bob.organization.id), [source.id])).toEqual([]);
    // a job id of another source of the same org is 404 too
    const other = (await create(trackerSource('Other of alice'))).body;
    expect((await ctx.server.request('GET', `/sources/${other.id}/jobs/${started.body.id}`, { token: ctx.alice.token })).status).toBe(404);
  });

  it('deletes a source with its history', async () => {
    const source = (await create(trackerSource('Short lived'))).body;
    const started = await ctx.server.request('POST', `/sources/${source.id}/sync`, { token: ctx.alice.token });
    await jobEnds(ctx.server, ctx.alice.token, source.id, started.body.id);
    await ctx.server.service.services.sourceService.settled(source.id);
    expect((await ctx.server.request('DELETE', `/sources/${source.id}`, { token: ctx.alice.token })).status).toBe(204);
    expect((await ctx.server.request('GET', `/sources/${source.id}`, { token: ctx.alice.token })).status).toBe(404);
    expect((await ctx.server.request('GET', `/sources/${source.id}/jobs`, { token: ctx.alice.token })).status).toBe(404);
  });
});
