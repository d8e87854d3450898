import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { createPipeline, ingest, ndjson } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('context pipelines and ingest tokens', () => {
  const ctx = useTwoOrgs();

  it('creates, reads, lists, updates and deletes a pipeline', async () => {
    const created = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'ci events', kind: 'webhook', target_table: 'context_events', realm: 'default' },
    });
    expectStatus(created, 201).toMatchObject({
      name: 'ci events',
      kind: 'webhook',
      target_table: 'context_events',
      realm: 'default',
      require_signature: false,
      created_by: ctx.alice.user.id,
      ingest_path: '/context/ingest/webhook/{token}',
    });
    const id = created.body.id as string;
    expect((await ctx.server.request('GET', `/context/pipelines/${id}`, { token: ctx.alice.token })).body.name).toBe('ci events');

    const list = await ctx.server.request('GET', '/context/pipelines', { token: ctx.alice.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((item: { id: string }) => item.id)).toContain(id);

    const patched = await ctx.server.request('PATCH', `/context/pipelines/${id}`, {
      token: ctx.alice.token,
      body: { name: 'ci events v2', require_signature: true, target_table: 'context_nodes' },
    });
    expectStatus(patched, 200).toMatchObject({ name: 'ci events v2', require_signature: true, target_table: 'context_nodes' });

    const kind = await ctx.server.request('PATCH', `/context/pipelines/${id}`, { token: ctx.alice.token, body: { kind: 'stream' } });
    expect(kind.status).toBe(400);
    expect(kind.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'kind' } });

    expect((await ctx.server.request('DELETE', `/context/pipelines/${id}`, { token: ctx.alice.token })).status).toBe(204);
    const gone = await ctx.server.request('GET', `/context/pipelines/${id}`, { token: ctx.alice.token });
    expectError(gone, 404, 'not_found');
  });

  it('validates the body: target table, kind, realm, duplicate names', async () => {
    const badTable = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'x', kind: 'webhook', target_table: 'users' },
    });
    expectError(badTable, 400, 'validation_error');
    const badKind = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'x', kind: 'kafka', target_table: 'context_events' },
    });
    expect(badKind.status).toBe(400);
    const unknownRealm = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'x', kind: 'webhook', target_table: 'context_events', realm: 'nowhere' },
    });
    expect(unknownRealm.status).toBe(400);
    expect(unknownRealm.body.error.message).toContain('realm "nowhere" does not exist');
    const extra = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'x', kind: 'webhook', target_table: 'context_events', colour: 'red' },
    });
    expect(extra.status).toBe(400);

    await ctx.server.request('POST', '/context/pipelines', { token: ctx.alice.token, body: { name: 'dup', target_table: 'context_events' } });
    const again = await ctx.server.request('POST', '/context/pipelines', { token: ctx.alice.token, body: { name: 'dup', target_table: 'context_nodes' } });
    expectError(again, 409, 'conflict');
  });

  it('honours Idempotency-Key on pipeline and token creation', async () => {
    const headers = { 'idempotency-key': 'pipeline-create-1' };
    const body = { name: 'idempotent', kind: 'webhook', target_table: 'context_events' };
    const first = await ctx.server.request('POST', '/context/pipelines', { token: ctx.alice.token, body, headers });
    const second = await ctx.server.request('POST', '/context/pipelines', { token: ctx.alice.token, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);

    const tokenHeaders = { 'idempotency-key': 'token-create-1' };
    const t1 = await ctx.server.request('POST', `/context/pipelines/${first.body.id}/tokens`, { token: ctx.alice.token, body: {}, headers: tokenHeaders });
    const t2 = await ctx.server.request('POST', `/context/pipelines/${first.body.id}/tokens`, { token: ctx.alice.token, body: {}, headers: tokenHeaders });
    expect(t2.body.id).toBe(t1.body.id);
    const list = await ctx.server.request('GET', `/context/pipelines/${first.body.id}/tokens`, { token: ctx.alice.token });
    expect(list.body.total).toBe(1);
  });

  it('issues many ctx_ tokens per pipeline, shows each plaintext once, revokes them one by one', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice);
    expect(pipeline.token).toMatch(/^ctx_[A-Za-z0-9]{32}$/);
    expect(pipeline.signingSecret).toMatch(/^[A-Za-z0-9]{40}$/);
    const second = await ctx.server.request('POST', `/context/pipelines/${pipeline.pipelineId}/tokens`, {
      token: ctx.alice.token,
      body: { signing_secret: 'my-own-signing-secret-123' },
    });
    expect(second.status).toBe(201);
    expect(second.body.token).toMatch(/^ctx_[A-Za-z0-9]{32}$/);
    expect(second.body.token).not.toBe(pipeline.token);
    expect(second.body.signing_secret).toBe('my-own-signing-secret-123');
    expect(second.body.token_prefix).toBe(second.body.token.slice(0, 8));

    const list = await ctx.server.request('GET', `/context/pipelines/${pipeline.pipelineId}/tokens`, { token: ctx.alice.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    for (const item of list.body.items) {
      expect(Object.keys(item).sort()).toEqual(['active', 'created_at', 'created_by', 'id', 'pipeline_id', 'revoked_at', 'token_prefix', 'updated_at']);
    }
    expect(list.text).not.toContain(pipeline.token);
    expect(list.text).not.toContain(second.body.token);
    expect(list.text).not.toContain(pipeline.signingSecret);
    expect(list.text).not.toContain('my-own-signing-secret-123');

    const rows = ndjson([{ label: 'hello' }]);
    expect((await ingest(ctx.server, pipeline.token, rows)).status).toBe(200);
    expect((await ingest(ctx.server, second.body.token, rows)).status).toBe(200);

    const revoke = await ctx.server.request('DELETE', `/context/pipelines/${pipeline.pipelineId}/tokens/${pipeline.tokenId}`, { token: ctx.alice.token });
    expect(revoke.status).toBe(204);
    const refused = await ingest(ctx.server, pipeline.token, rows);
    expectError(refused, 401, 'unknown_token');
    expect((await ingest(ctx.server, second.body.token, rows)).status).toBe(200);

    const after = await ctx.server.request('GET', `/context/pipelines/${pipeline.pipelineId}/tokens`, { token: ctx.alice.token });
    const revoked = after.body.items.find((item: { id: string }) => item.id === pipeline.tokenId);
    expect(revoked.active).toBe(false);
    expect(typeof revoked.revoked_at).toBe('string');
  });

  it('refuses a too short signing secret', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice);
    const response = await ctx.server.request('POST', `/context/pipelines/${pipeline.pipelineId}/tokens`, {
      token: ctx.alice.token,
      body: { signing_secret: 'short' },
    });
    expectError(response, 400, 'validation_error');
  });

  it('answers 401 unknown_token for tokens that never existed, malformed ones, and those of a deleted pipeline', async () => {
    for (const token of ['ctx_' + 'A'.repeat(32), 'ctx_short', 'not-a-token']) {
      const response = await ingest(ctx.server, token, ndjson([{ a: 1 }]));
      expectError(response, 401, 'unknown_token');
    }
    const pipeline = await createPipeline(ctx.server, ctx.alice);
    await ctx.server.request('DELETE', `/context/pipelines/${pipeline.pipelineId}`, { token: ctx.alice.token });
    const response = await ingest(ctx.server, pipeline.token, ndjson([{ a: 1 }]));
    expectError(response, 401, 'unknown_token');
  });

  it('lets a viewer read pipelines but not manage them (403)', async () => {
    const viewer = await addMember(ctx.server, ctx.alice, 'viewer');
    const pipeline = await createPipeline(ctx.server, ctx.alice);
    expect((await ctx.server.request('GET', `/context/pipelines/${pipeline.pipelineId}`, { token: viewer.token })).status).toBe(200);
    const create = await ctx.server.request('POST', '/context/pipelines', {
      token: viewer.token,
      body: { name: 'nope', kind: 'webhook', target_table: 'context_events' },
    });
    expect(create.status).toBe(403);
    expect(create.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'pipeline:manage' } });
    const token = await ctx.server.request('POST', `/context/pipelines/${pipeline.pipelineId}/tokens`, { token: viewer.token, body: {} });
    expect(token.status).toBe(403);
    expect((await ctx.server.request('GET', '/context/pipelines', {})).status).toBe(401);
  });

  it("answers 404 for another organization's pipeline, tokens and runs, on every verb", async () => {
    const pipeline = await createPipeline(ctx.server, ctx.bob);
    const base = `/context/pipelines/${pipeline.pipelineId}`;
    const name = (await ctx.server.request('GET', base, { token: ctx.bob.token })).body.name as string;
    const attempts: [string, string, unknown][] = [
      ['GET', base, undefined],
      ['PATCH', base, { name: 'stolen' }],
      ['DELETE', base, undefined],
      ['POST', `${base}/tokens`, {}],
      ['GET', `${base}/tokens`, undefined],
      ['DELETE', `${base}/tokens/${pipeline.tokenId}`, undefined],
      ['GET', `${base}/runs`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const response = await ctx.server.request(method, path, { token: ctx.alice.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    // a token id of another pipeline of the caller's own organization is not found either
    const own = await createPipeline(ctx.server, ctx.alice);
    const crossed = await ctx.server.request('DELETE', `/context/pipelines/${own.pipelineId}/tokens/${pipeline.tokenId}`, { token: ctx.alice.token });
    expect(crossed.status).toBe(404);
    // bob's token still works: nothing above touched it
    expect((await ingest(ctx.server, pipeline.token, ndjson([{ label: 'still here' }]))).status).toBe(200);
    expect((await ctx.server.request('GET', base, { token: ctx.bob.token })).body.name).toBe(name);
  });
});
