/**
 * /policies/sources: CRUD with the ssh key sealed and masked, immutable
 * source_type, org isolation, inline modules compiled at save, and the sync
 * from a real local bare repository: a good commit joins the bundle, a broken
 * one is refused while the previous bundle stays active, one sync at a time,
 * and rego_file naming a synced module.
 */
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { asOrgId } from '../../runtime/store/types.js';
import { withTestServer, startTestServer, type Session } from '../helpers/server.js';
import { createGitRepo } from './git-repo.js';
import { expectError } from '../helpers/expect-status.js';

const SSH_KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-not-a-real-key\n-----END OPENSSH PRIVATE KEY-----\n';
const gitPolicy = (message: string): string =>
  `package service.git_read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "${message}"\n}\n`;
const WRITE = { resource: { tool: 'memory.store', tool_effect: 'write' } };

describe('/policies/sources', () => {
  const ctx = useSuite(async (own) => {
    const server = own(await startTestServer({ SERVICE_FEATURES_POLICIES: 'true', POLICY_GIT_ALLOW_LOCAL: 'true' }));
    return {
      server,
      alice: await server.register('Sources Org A'),
      bob: await server.register('Sources Org B'),
      repo: own(createGitRepo(), (repo) => repo.remove()),
    };
  });

  const req = (session: Session, method: string, path: string, body?: unknown) =>
    ctx.server.request(method, path, { token: session.token, ...(body === undefined ? {} : { body }) });
  const denyOf = async (session: Session) =>
    (await req(session, 'POST', '/policies/eval', { query: 'x := data.service.git_read_only.deny', input: WRITE })).body;

  it('creates a git source with its ssh key sealed at rest and masked on every read; source_type is immutable; another organization sees 404', async () => {
    const created = await req(ctx.alice, 'POST', '/policies/sources', {
      name: 'keyed',
      source_type: 'git_repo',
      git_url: 'git@github.com:acme/policies.git',
      git_path: 'rego/',
      git_ssh_key: SSH_KEY,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'keyed',
      source_type: 'git_repo',
      git_branch: 'main',
      git_path: 'rego',
      git_ssh_key: '********',
      modules: [],
      enabled: true,
      last_sync_status: 'never',
      last_sync_error: null,
      last_synced_at: null,
      commit: null,
    });
    const id = created.body.id as string;
    expect(created.text).not.toContain('OPENSSH');
    for (const read of [await req(ctx.alice, 'GET', `/policies/sources/${id}`), await req(ctx.alice, 'GET', '/policies/sources')]) {
      expect(read.status).toBe(200);
      expect(read.text).not.toContain('OPENSSH');
      expect(read.text).toContain('"git_ssh_key":"********"');
    }
    const stored = await ctx.server.service.services.collections.policySources.get(asOrgId(ctx.alice.organization.id), id);
    expect(stored?.git_ssh_key_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain('OPENSSH');

    const immutable = await req(ctx.alice, 'PATCH', `/policies/sources/${id}`, { source_type: 'inline' });
    expectError(immutable, 400, 'immutable_field');
    // the masked value keeps the key; null removes it
    const kept = await req(ctx.alice, 'PATCH', `/policies/sources/${id}`, { git_ssh_key: '********', git_branch: 'release' });
    expect(kept.body).toMatchObject({ git_ssh_key: '********', git_branch: 'release' });
    expect((await req(ctx.alice, 'PATCH', `/policies/sources/${id}`, { git_ssh_key: null })).body.git_ssh_key).toBeNull();

    for (const [method, path] of [
      ['GET', `/policies/sources/${id}`],
      ['PATCH', `/policies/sources/${id}`],
      ['DELETE', `/policies/sources/${id}`],
      ['POST', `/policies/sources/${id}/sync`],
    ] as const) {
      const answer = await req(ctx.bob, method, path, method === 'PATCH' ? { enabled: false } : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    expect((await req(ctx.bob, 'GET', '/policies/sources')).body.items).toEqual([]);
    expect((await req(ctx.alice, 'DELETE', `/policies/sources/${id}`)).status).toBe(204);
    expect((await req(ctx.alice, 'GET', `/policies/sources/${id}`)).status).toBe(404);
  });

  it('validates git URLs, branches and paths; refused addresses answer egress_refused at save', async () => {
    const create = (fields: Record<string, unknown>) =>
      req(ctx.alice, 'POST', '/policies/sources', { name: `v${Math.random().toString(36).slice(2, 8)}`, source_type: 'git_repo', ...fields });
    for (const git_url of [
      'http://example.com/r.git',
      'ext::sh -c touch% /tmp/x',
      '-uhello',
      'https://user:token@example.com/r.git',
      'ftp://example.com/r.git',
    ]) {
      const answer = await create({ git_url });
      expect(answer.status, git_url).toBe(400);
      expect(answer.body.error.details.field).toBe('git_url');
    }
    expect((await create({ git_url: 'https://example.com/r.git', git_branch: '--upload-pack=x' })).status).toBe(400);
    expect((await create({ git_url: 'https://example.com/r.git', git_path: '../other' })).status).toBe(400);
    expect((await create({})).status).toBe(400);
    expect((await create({ git_url: 'https://example.com/r.git', modules: [{ path: 'a.rego', rego: 'package a\n' }] })).status).toBe(400);
    for (const git_url of ['https://10.0.0.1/r.git', 'git@169.254.169.254:acme/r.git', 'ssh://git@[fd00::1]:2222/r.git']) {
      const answer = await create({ git_url });
      expectError(answer, 422, 'egress_refused');
    }
  });

  it('inline sources: modules compile at save (positions on error), join the bundle, and have nothing to sync', async () => {
    const broken = await req(ctx.alice, 'POST', '/policies/sources', {
      name: 'inline_bad',
      source_type: 'inline',
      modules: [{ path: 'p.rego', rego: 'package lib.x\n\np if {\n  1 +\n}\n' }],
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error.details.errors[0]).toMatchObject({ file: 'inline_bad/p.rego', line: 5 });

    const created = await req(ctx.alice, 'POST', '/policies/sources', {
      name: 'shared',
      source_type: 'inline',
      modules: [{ path: 'lib/tools.rego', rego: 'package lib.tools\n\nwrites := {"memory.store"}\n' }],
    });
    expect(created.status, created.text).toBe(201);
    expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.lib.tools.writes' })).body).toEqual({ result: [{ x: ['memory.store'] }] });
    expect((await req(ctx.bob, 'POST', '/policies/eval', { query: 'x := data.lib.tools.writes' })).body).toEqual({ result: [] });
    const sync = await req(ctx.alice, 'POST', `/policies/sources/${created.body.id}/sync`);
    expect(sync.status).toBe(409);
    const disabled = await req(ctx.alice, 'PATCH', `/policies/sources/${created.body.id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.lib.tools.writes' })).body).toEqual({ result: [] });
    await req(ctx.alice, 'DELETE', `/policies/sources/${created.body.id}`);
  });

  it('syncs a real bare repository: a good commit joins the bundle, a broken one is refused and the previous bundle stays active', async () => {
    const first = ctx.repo.commit({
      'policies/read_only.rego': gitPolicy('v1: read-only'),
      'policies/from_git.rego': 'package service.from_git\n\ndefault allow := true\n',
      'README.md': 'not rego\n',
      'other/ignored.rego': 'package ignored\nx := 1\n',
    });
    ctx.repo.link('policies/passwd.rego', '/etc/passwd');
    const created = await req(ctx.alice, 'POST', '/policies/sources', {
      name: 'gitsrc',
      source_type: 'git_repo',
      git_url: `file://${ctx.repo.bare}`,
      git_path: 'policies',
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect(await denyOf(ctx.alice)).toEqual({ result: [] });

    const before = (await ctx.server.request('GET', '/health')).body.policies.revision as number;
    const synced = await req(ctx.alice, 'POST', `/policies/sources/${id}/sync`);
    expect(synced.status, synced.text).toBe(200);
    expect(synced.body).toMatchObject({ last_sync_status: 'succeeded', last_sync_error: null, commit: first });
    // the symlink and the files outside git_path are not read
    expect(synced.body.modules.map((module: { path: string }) => module.path)).toEqual(['from_git.rego', 'read_only.rego']);
    expect(typeof synced.body.last_synced_at).toBe('string');
    expect((await ctx.server.request('GET', '/health')).body.policies.revision).toBeGreaterThan(before);
    expect(await denyOf(ctx.alice)).toEqual({ result: [{ x: ['v1: read-only'] }] });
    expect(await denyOf(ctx.bob)).toEqual({ result: [] });

    // the second commit changes the message and adds a module that does not parse
    ctx.repo.commit({
      'policies/read_only.rego': gitPolicy('v2: read-only'),
      'policies/broken.rego': 'package service.broken\n\nallow if {\n  input.x ==\n}\n',
    });
    const refused = await req(ctx.alice, 'POST', `/policies/sources/${id}/sync`);
    expectError(refused, 422, 'policy_sync_failed');
    expect(refused.body.error.details.errors[0]).toMatchObject({ file: 'gitsrc/broken.rego', line: 5 });
    const after = (await req(ctx.alice, 'GET', `/policies/sources/${id}`)).body;
    expect(after).toMatchObject({ last_sync_status: 'failed', commit: first, last_sync_error: { file: 'gitsrc/broken.rego', line: 5 } });
    expect(typeof after.last_sync_error.column).toBe('number');
    expect(await denyOf(ctx.alice)).toEqual({ result: [{ x: ['v1: read-only'] }] });

    // a commit that repairs the module syncs, and its message replaces the old one
    const fixed = ctx.repo.commit({ 'policies/broken.rego': 'package service.broken\n\nallow if input.x == 1\n' });
    const good = await req(ctx.alice, 'POST', `/policies/sources/${id}/sync`);
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ last_sync_status: 'succeeded', last_sync_error: null, commit: fixed });
    expect(await denyOf(ctx.alice)).toEqual({ result: [{ x: ['v2: read-only'] }] });
  });

  it('rego_file names a module of a synced source as <source name>/<path>; one that does not resolve is 422; a source in use is not deleted', async () => {
    const source = (await req(ctx.alice, 'GET', '/policies/sources')).body.items.find((item: { name: string }) => item.name === 'gitsrc');
    const created = await req(ctx.alice, 'POST', '/policies', { name: 'from_git', rego_file: 'gitsrc/from_git.rego' });
    expect(created.status, created.text).toBe(201);
    expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.service.from_git.allow' })).body).toEqual({ result: [{ x: true }] });
    // disabled, the policy takes its file out of the bundle with it
    await req(ctx.alice, 'PATCH', `/policies/${created.body.id}`, { enabled: false });
    expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.service.from_git.allow' })).body).toEqual({ result: [] });

    for (const rego_file of ['gitsrc/nope.rego', 'nosuchsource/read_only.rego']) {
      const missing = await req(ctx.alice, 'POST', '/policies', { name: 'missing', rego_file });
      expectError(missing, 422, 'rego_file_unresolved');
      expect(missing.body.error.message).toContain(rego_file);
    }
    // another organization has no source of that name
    expect((await req(ctx.bob, 'POST', '/policies', { name: 'from_git', rego_file: 'gitsrc/from_git.rego' })).status).toBe(422);

    const inUse = await req(ctx.alice, 'DELETE', `/policies/sources/${source.id}`);
    expect(inUse.status).toBe(409);
    await req(ctx.alice, 'DELETE', `/policies/${created.body.id}`);
    expect((await req(ctx.alice, 'DELETE', `/policies/sources/${source.id}`)).status).toBe(204);
    expect(await denyOf(ctx.alice)).toEqual({ result: [] });
  });

  it('answers 409 sync_in_progress to a second sync of the same source while the first runs', async () => {
    const big = createGitRepo();
    try {
      const files: Record<string, string> = {};
      for (let index = 0; index < 120; index++) files[`p/m${index}.rego`] = `package lib.m${index}\n\nv := ${index}\n`;
      big.commit(files);
      const created = await req(ctx.alice, 'POST', '/policies/sources', { name: 'big', source_type: 'git_repo', git_url: big.bare });
      expect(created.status, created.text).toBe(201);
      const answers = await Promise.all([
        req(ctx.alice, 'POST', `/policies/sources/${created.body.id}/sync`),
        req(ctx.alice, 'POST', `/policies/sources/${created.body.id}/sync`),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(answers.find((answer) => answer.status === 409)?.body.error.code).toBe('sync_in_progress');
      expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.lib.m119.v' })).body).toEqual({ result: [{ x: 119 }] });
      await req(ctx.alice, 'DELETE', `/policies/sources/${created.body.id}`);
    } finally {
      big.remove();
    }
  });
});

describe('/policies/sources without POLICY_GIT_ALLOW_LOCAL', () => {
  it('refuses file:// and absolute local paths', async () => {
    await withTestServer({ SERVICE_FEATURES_POLICIES: 'true' }, async (server) => {
      const alice = await server.register();
      for (const git_url of ['file:///tmp/repo.git', '/tmp/repo.git']) {
        const answer = await server.request('POST', '/policies/sources', { token: alice.token, body: { name: 'local', source_type: 'git_repo', git_url } });
        expect(answer.status, git_url).toBe(400);
        expect(answer.body.error.message).toContain('POLICY_GIT_ALLOW_LOCAL');
      }
      const off = await startTestServer();
      try {
        const bob = await off.register();
        expect((await off.request('GET', '/policies/sources', { token: bob.token })).body.error.code).toBe('feature_disabled');
      } finally {
        await off.stop();
      }
    });
  });
});
