import { describe, expect, it } from 'vitest';
import { addMember } from '../helpers/members.js';
import { useTwoOrgs } from '../helpers/suite.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const DEFAULTS = {
  llm_provider: null,
  llm_model: null,
  llm_base_url: null,
  llm_api_key: null,
  embedding_model: null,
  auto_embed_on_ingest: false,
  approval_timeout_secs: 900,
  context_tier: 'basic',
};

describe('settings', () => {
  const ctx = useTwoOrgs();

  it('starts every organization with the defaults and its name', async () => {
    const response = await ctx.server.request('GET', '/settings', { token: ctx.alice.token });
    expectStatus(response, 200).toEqual({ organization_name: 'Alice Inc', ...DEFAULTS });
  });

  it('PATCH changes only the fields given; organizations do not see each other', async () => {
    const patched = await ctx.server.request('PATCH', '/settings', {
      token: ctx.alice.token,
      body: { llm_provider: 'anthropic', llm_model: 'claude-sonnet-4', approval_timeout_secs: 60 },
    });
    expectStatus(patched, 200).toEqual({
      ...DEFAULTS,
      organization_name: 'Alice Inc',
      llm_provider: 'anthropic',
      llm_model: 'claude-sonnet-4',
      approval_timeout_secs: 60,
    });

    const again = await ctx.server.request('PATCH', '/settings', { token: ctx.alice.token, body: { auto_embed_on_ingest: true } });
    expect(again.body).toMatchObject({ llm_provider: 'anthropic', llm_model: 'claude-sonnet-4', auto_embed_on_ingest: true });

    const cleared = await ctx.server.request('PATCH', '/settings', { token: ctx.alice.token, body: { llm_model: null } });
    expect(cleared.body).toMatchObject({ llm_provider: 'anthropic', llm_model: null });

    const bobs = await ctx.server.request('GET', '/settings', { token: ctx.bob.token });
    expect(bobs.body).toEqual({ organization_name: 'Bob Ltd', ...DEFAULTS });
  });

  it('PUT writes the whole desired state: omitted fields reset to defaults', async () => {
    const carol = await ctx.server.register('Carol Co');
    await ctx.server.request('PATCH', '/settings', {
      token: carol.token,
      body: { llm_provider: 'openai', embedding_model: 'text-embedding-3-small', approval_timeout_secs: 120 },
    });
    const put = await ctx.server.request('PUT', '/settings', {
      token: carol.token,
      body: { llm_provider: 'openai', llm_model: 'gpt-4o', llm_base_url: 'http://127.0.0.1:9999/v1', llm_api_key: 'carol-own-key' },
    });
    expectStatus(put, 200).toEqual({
      ...DEFAULTS,
      organization_name: 'Carol Co',
      llm_provider: 'openai',
      llm_model: 'gpt-4o',
      llm_base_url: 'http://127.0.0.1:9999/v1',
      llm_api_key: '********',
    });
    expect((await ctx.server.request('GET', '/settings', { token: carol.token })).body).toEqual(put.body);

    const empty = await ctx.server.request('PUT', '/settings', { token: carol.token, body: {} });
    expect(empty.body).toEqual({ organization_name: 'Carol Co', ...DEFAULTS });
  });

  it('renames the organization through organization_name', async () => {
    const dave = await ctx.server.register('Dave GmbH');
    const renamed = await ctx.server.request('PATCH', '/settings', { token: dave.token, body: { organization_name: 'Dave AG' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.organization_name).toBe('Dave AG');
    const me = await ctx.server.request('GET', '/auth/me', { token: dave.token });
    expect(me.body.organization).toEqual({ id: dave.organization.id, name: 'Dave AG' });

    const put = await ctx.server.request('PUT', '/settings', { token: dave.token, body: { organization_name: 'Dave SE', llm_model: 'm' } });
    expect(put.body).toMatchObject({ organization_name: 'Dave SE', llm_model: 'm' });
    // PUT without organization_name keeps the name: it has no default to go back to
    const kept = await ctx.server.request('PUT', '/settings', { token: dave.token, body: {} });
    expect(kept.body.organization_name).toBe('Dave SE');
  });

  it('renaming the organization also needs org:manage (an admin may change the rest)', async () => {
    const erin = await ctx.server.register('Erin Org');
    const admin = await addMember(ctx.server, erin, 'admin');
    const refused = await ctx.server.request('PATCH', '/settings', {
      token: admin.token,
      body: { organization_name: 'Hijacked', llm_model: 'x' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'org:manage' } });
    // nothing of the refused request was written
    expect((await ctx.server.request('GET', '/settings', { token: erin.token })).body).toEqual({ organization_name: 'Erin Org', ...DEFAULTS });

    const sameName = await ctx.server.request('PATCH', '/settings', { token: admin.token, body: { organization_name: 'Erin Org', llm_model: 'x' } });
    expect(sameName.status).toBe(200);
    expect(sameName.body.llm_model).toBe('x');
  });

  it('rejects invalid values with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ llm_provider: 'mistral' }, 'llm_provider'],
      [{ llm_base_url: 'ftp://example.test' }, 'llm_base_url'],
      [{ llm_base_url: 'not a url' }, 'llm_base_url'],
      [{ approval_timeout_secs: 0 }, 'approval_timeout_secs'],
      [{ approval_timeout_secs: 604_801 }, 'approval_timeout_secs'],
      [{ approval_timeout_secs: 1.5 }, 'approval_timeout_secs'],
      [{ auto_embed_on_ingest: 'yes' }, 'auto_embed_on_ingest'],
      [{ organization_name: '   ' }, 'organization_name'],
      [{ llm_model: '' }, 'llm_model'],
      [{ llm_base_url: 'http://127.0.0.1:9999/v1', llm_api_key: '  ' }, 'llm_api_key'],
      [{ llm_base_url: 'http://127.0.0.1:9999/v1', llm_api_key: 42 }, 'llm_api_key'],
    ];
    for (const [body, field] of cases) {
      for (const method of ['PATCH', 'PUT']) {
        const response = await ctx.server.request(method, '/settings', { token: ctx.alice.token, body });
        expect(response.status, `${method} ${JSON.stringify(body)}`).toBe(400);
        expect(response.body.error.code).toBe('validation_error');
        expect(response.body.error.details.issues[0].path).toBe(field);
        expect(response.body.error.message).toContain(field);
      }
    }
    const unknown = await ctx.server.request('PATCH', '/settings', { token: ctx.alice.token, body: { theme: 'dark' } });
    expectError(unknown, 400, 'validation_error');

    // the limits themselves are accepted
    for (const approval_timeout_secs of [1, 604_800]) {
      const ok = await ctx.server.request('PATCH', '/settings', { token: ctx.bob.token, body: { approval_timeout_secs } });
      expect(ok.body.approval_timeout_secs).toBe(approval_timeout_secs);
    }
  });

  it('needs settings:manage to write and a credential to read', async () => {
    const viewer = await addMember(ctx.server, ctx.bob, 'viewer');
    expect((await ctx.server.request('GET', '/settings', { token: viewer.token })).status).toBe(200);
    const write = await ctx.server.request('PATCH', '/settings', { token: viewer.token, body: { llm_model: 'x' } });
    expect(write.status).toBe(403);
    expect(write.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'settings:manage' } });
    const anonymous = await ctx.server.request('GET', '/settings');
    expectError(anonymous, 401, 'unauthorized');
  });
});
