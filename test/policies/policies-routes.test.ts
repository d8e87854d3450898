/** /policies with the feature on: CRUD compiled at save, validate with positions, OPA-style eval with the engine's error codes. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { withTestServer, startTestServer, type Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const READ_ONLY = 'package service.read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "read-only"\n}\n';

describe('/policies', () => {
  const ctx = useTwoOrgs({ SERVICE_FEATURES_POLICIES: 'true' });

  const req = (session: Session, method: string, path: string, body?: unknown) =>
    ctx.server.request(method, path, { token: session.token, ...(body === undefined ? {} : { body }) });

  it('creates, lists, gets (by id or name), patches and deletes a policy; another organization sees 404', async () => {
    const created = await req(ctx.alice, 'POST', '/policies', { name: 'read_only', rego_code: READ_ONLY });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: 'read_only', package_path: 'service.read_only', rego_code: READ_ONLY, rego_file: null, enabled: true });
    const id = created.body.id as string;

    const list = await req(ctx.alice, 'GET', '/policies');
    expect(list.body.items.map((policy: { id: string }) => policy.id)).toEqual([id]);
    expect((await req(ctx.alice, 'GET', '/policies/read_only')).body.id).toBe(id);
    expect((await req(ctx.bob, 'GET', '/policies')).body.items).toEqual([]);
    expect((await req(ctx.bob, 'GET', `/policies/${id}`)).status).toBe(404);
    expect((await req(ctx.bob, 'PATCH', `/policies/${id}`, { enabled: false })).status).toBe(404);
    expect((await req(ctx.bob, 'DELETE', `/policies/${id}`)).status).toBe(404);

    const duplicate = await req(ctx.alice, 'POST', '/policies', { name: 'read_only', rego_code: READ_ONLY });
    expect(duplicate.status).toBe(409);

    const disabled = await req(ctx.alice, 'PATCH', `/policies/${id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    const renamed = await req(ctx.alice, 'PATCH', `/policies/${id}`, { name: 'other' });
    expectError(renamed, 400, 'immutable_field');

    expect((await req(ctx.alice, 'DELETE', `/policies/${id}`)).status).toBe(204);
    expect((await req(ctx.alice, 'GET', `/policies/${id}`)).status).toBe(404);
  });

  it('refuses a source that does not compile with the positions of its errors, a wrong package, and not exactly one source', async () => {
    const broken = await req(ctx.alice, 'POST', '/policies', { name: 'broken', rego_code: 'package service.broken\n\nallow if {\n  input.x ==\n}\n' });
    expectError(broken, 400, 'validation_error');
    const [first] = broken.body.error.details.errors;
    expect(first.line).toBe(5);
    expect(typeof first.column).toBe('number');
    expect(first.message).not.toBe('');

    const unsafe = await req(ctx.alice, 'POST', '/policies', { name: 'unsafe', rego_code: 'package service.unsafe\n\nallow if { x == 1 }\n' });
    expect(unsafe.status).toBe(400);
    expect(unsafe.body.error.details.errors[0]).toMatchObject({ line: 3 });

    const wrongPackage = await req(ctx.alice, 'POST', '/policies', { name: 'mine', rego_code: 'package service.other\nallow := true\n' });
    expect(wrongPackage.status).toBe(400);
    expect(wrongPackage.body.error.message).toContain('service.mine');

    const both = await req(ctx.alice, 'POST', '/policies', { name: 'both', rego_code: READ_ONLY, rego_file: 'p.rego' });
    expect(both.status).toBe(400);
    const neither = await req(ctx.alice, 'POST', '/policies', { name: 'neither' });
    expect(neither.status).toBe(400);
    const badName = await req(ctx.alice, 'POST', '/policies', { name: 'Bad-Name', rego_code: READ_ONLY });
    expect(badName.status).toBe(400);

    // a patch is compiled too, and leaves the stored policy as it was
    const good = await req(ctx.alice, 'POST', '/policies', { name: 'patched', rego_code: 'package service.patched\nallow := true\n' });
    expect(good.status).toBe(201);
    const badPatch = await req(ctx.alice, 'PATCH', `/policies/${good.body.id}`, { rego_code: 'package service.patched\nallow := \n' });
    expect(badPatch.status).toBe(400);
    // the expression is cut off by the end of the source (line 3)
    expect(badPatch.body.error.details.errors[0].line).toBe(3);
    expect((await req(ctx.alice, 'GET', `/policies/${good.body.id}`)).body.rego_code).toBe('package service.patched\nallow := true\n');
    await req(ctx.alice, 'DELETE', `/policies/${good.body.id}`);
  });

  it("reads rego_file from the organization's files at save; a missing file is 422 rego_file_unresolved", async () => {
    const missing = await req(ctx.alice, 'POST', '/policies', { name: 'from_file', rego_file: 'policies/nope.rego' });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatchObject({ code: 'rego_file_unresolved', details: { field: 'rego_file' } });
    const upload = await ctx.server.request('PUT', '/files/content?path=policies/from_file.rego', {
      token: ctx.alice.token,
      body: Buffer.from('package service.from_file\ndefault allow := false\n'),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(upload.status, upload.text).toBeLessThan(300);
    const created = await req(ctx.alice, 'POST', '/policies', { name: 'from_file', rego_file: 'policies/from_file.rego', enabled: false });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ rego_code: null, rego_file: 'policies/from_file.rego', enabled: false });
    // another organization has no such file
    expect((await req(ctx.bob, 'POST', '/policies', { name: 'from_file', rego_file: 'policies/from_file.rego' })).status).toBe(422);
    await req(ctx.alice, 'DELETE', `/policies/${created.body.id}`);
  });

  it('validates a source: 200 with valid or the errors and their positions', async () => {
    const ok = await req(ctx.alice, 'POST', '/policies/policies/validate', { rego_code: READ_ONLY });
    expectStatus(ok, 200).toEqual({ valid: true, errors: [] });
    const bad = await req(ctx.alice, 'POST', '/policies/policies/validate', { rego_code: 'package x\n\np if {\n  1 +\n}\n' });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors[0]).toMatchObject({ line: 5 });
    const unknownFn = await req(ctx.alice, 'POST', '/policies/policies/validate', { rego_code: 'package x\np if { nope(1) }\n' });
    expect(unknownFn.body.valid).toBe(false);
    expect(unknownFn.body.errors[0]).toMatchObject({ line: 2 });
  });

  it('evaluates a query with the enabled policies plus inline modules, OPA-style', async () => {
    const policy = await req(ctx.alice, 'POST', '/policies', { name: 'read_only', rego_code: READ_ONLY });
    expect(policy.status).toBe(201);
    const input = { resource: { tool_effect: 'write' } };
    const denied = await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.service.read_only.deny', input });
    expectStatus(denied, 200).toEqual({ result: [{ x: ['read-only'] }] });
    const read = await req(ctx.alice, 'POST', '/policies/eval', { query: 'data.service.read_only.deny[m]', input: { resource: { tool_effect: 'read' } } });
    expect(read.body).toEqual({ result: [] });

    const inline = await req(ctx.alice, 'POST', '/policies/eval', {
      query: 'data.t.p[x]',
      modules: [{ name: 't.rego', rego: 'package t\np contains x if { some x in data.xs; x > 1 }\n' }],
      data: { xs: [1, 2, 3] },
    });
    expect(inline.status, inline.text).toBe(200);
    expect(inline.body.result).toEqual([{ x: 2 }, { x: 3 }]);

    // the other organization has no read_only policy: undefined, an empty result
    expect((await req(ctx.bob, 'POST', '/policies/eval', { query: 'x := data.service.read_only.deny', input })).body).toEqual({ result: [] });
    // a disabled policy is not in the bundle
    await req(ctx.alice, 'PATCH', `/policies/${policy.body.id}`, { enabled: false });
    expect((await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := data.service.read_only.deny', input })).body).toEqual({ result: [] });
    await req(ctx.alice, 'DELETE', `/policies/${policy.body.id}`);
  });

  it("answers the engine's error codes: parse, compile, conflict, type and builtin errors (strict)", async () => {
    const parse = await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := ' });
    expectError(parse, 400, 'rego_parse_error');

    const compileError = await req(ctx.alice, 'POST', '/policies/eval', {
      query: 'data.t.p',
      modules: [{ rego: 'package t\np if { x := 1; x := 2 }\n' }],
    });
    expectError(compileError, 400, 'rego_compile_error');

    const conflict = await req(ctx.alice, 'POST', '/policies/eval', {
      query: 'x := data.t.p',
      modules: [{ rego: 'package t\np := 1\np := 2 if { true }\n' }],
    });
    expectError(conflict, 400, 'eval_conflict_error');

    const unknownFunction = await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := nope(1)' });
    expectError(unknownFunction, 400, 'rego_type_error');

    // a failing built-in is undefined by default, an error with strict_builtin_errors
    const lenient = await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := to_number("abc")' });
    expect(lenient.body).toEqual({ result: [] });
    const strict = await req(ctx.alice, 'POST', '/policies/eval', { query: 'x := to_number("abc")', strict_builtin_errors: true });
    expectError(strict, 400, 'eval_builtin_error');

    const badBody = await req(ctx.alice, 'POST', '/policies/eval', { query: '' });
    expectError(badBody, 400, 'validation_error');
  });

  it("/health reports the policy engine and the active bundles' revision, which moves with every policy change", async () => {
    const before = await ctx.server.request('GET', '/health');
    expect(before.body.policies).toMatchObject({ status: 'ok', engine: 'rego' });
    const created = await req(ctx.alice, 'POST', '/policies', { name: 'health_probe', rego_code: 'package service.health_probe\n' });
    expect(created.status).toBe(201);
    const after = await ctx.server.request('GET', '/health');
    expect(after.body.policies.revision).toBeGreaterThan(before.body.policies.revision);
    await req(ctx.alice, 'DELETE', `/policies/${created.body.id}`);
  });

  it('needs policy:read / policy:manage', async () => {
    const key = await req(ctx.alice, 'POST', '/api-keys', { name: 'reader', permissions: ['policy:read'] });
    expect(key.status, key.text).toBe(201);
    const reader = { ...ctx.alice, token: key.body.key as string };
    expect((await req(reader, 'GET', '/policies')).status).toBe(200);
    const create = await req(reader, 'POST', '/policies', { name: 'x', rego_code: 'package service.x\n' });
    expect(create.status).toBe(403);
  });
});

describe('/policies across a restart', () => {
  it('keeps the policies; the bundle is compiled again from the store', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'policies-'));
    const env = { SERVICE_FEATURES_POLICIES: 'true', JWT_SECRET: randomBytes(32).toString('hex') };
    try {
      const first = await startTestServer(env, { dataDir });
      const alice = await first.register();
      const created = await first.request('POST', '/policies', { token: alice.token, body: { name: 'read_only', rego_code: READ_ONLY } });
      expect(created.status).toBe(201);
      await first.stop();
      const again = await startTestServer(env, { dataDir });
      try {
        const list = await again.request('GET', '/policies', { token: alice.token });
        expect(list.body.items.map((policy: { name: string }) => policy.name)).toEqual(['read_only']);
        const evaluated = await again.request('POST', '/policies/eval', {
          token: alice.token,
          body: { query: 'x := data.service.read_only.deny', input: { resource: { tool_effect: 'write' } } },
        });
        expect(evaluated.body).toEqual({ result: [{ x: ['read-only'] }] });
      } finally {
        await again.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('/policies with the feature off', () => {
  it('answers 404 feature_disabled', async () => {
    await withTestServer({}, async (server) => {
      const alice = await server.register();
      const list = await server.request('GET', '/policies', { token: alice.token });
      expectError(list, 404, 'feature_disabled');
      const evaluated = await server.request('POST', '/policies/eval', { token: alice.token, body: { query: 'x := 1' } });
      expect(evaluated.body.error.code).toBe('feature_disabled');
      expect((await server.request('GET', '/health')).body).not.toHaveProperty('policies');
    });
  });
});
