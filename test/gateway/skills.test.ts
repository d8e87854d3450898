import { describe, expect, it } from 'vitest';
import { ownOrgs, useSuite } from '../helpers/suite.js';
import { addMember } from '../helpers/members.js';
import { oneOrg } from '../helpers/orgs.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

interface Skill {
  id: string;
  slug: string;
  status: string;
  usable: boolean;
  content?: string;
}

describe('skills', () => {
  const ctx = useSuite(async (own) => {
    const { server, owner: alice } = ownOrgs(own, await oneOrg({}, { name: 'Alice Inc' }));
    const aliceAdmin = await addMember(server, alice, 'admin');
    const bob = await server.register('Bob Ltd');
    return { bob, aliceAdmin, alice, server };
  });

  let counter = 0;

  const create = (session: Session, body: Record<string, unknown>) => ctx.server.request('POST', '/skills', { token: session.token, body });
  /** a fresh valid skill; `extra` overrides */
  const make = async (session: Session, extra: Record<string, unknown> = {}): Promise<Skill> => {
    counter += 1;
    const response = await create(session, { name: `Skill ${counter}`, slug: `skill-${counter}`, content: 'v1', ...extra });
    expect(response.status, response.text).toBe(201);
    return response.body as Skill;
  };
  const act = (session: Session, id: string, action: string, body?: unknown) =>
    ctx.server.request('POST', `/skills/${id}/${action}`, { token: session.token, body });

  it('creates a draft with defaults, reads it by id or slug, updates and deletes it', async () => {
    const created = await create(ctx.alice, { name: 'Incident triage', slug: 'incident-triage' });
    expectStatus(created, 201).toMatchObject({
      name: 'Incident triage',
      slug: 'incident-triage',
      description: '',
      version: '1.0.0',
      tags: [],
      content: '',
      scope: 'org',
      owner_user_id: null,
      status: 'draft',
      usable: false,
      created_by: ctx.alice.user.id,
      submitted_by: null,
      reviewed_by: null,
      reviewed_at: null,
      review_note: null,
    });
    expect(created.body.id).toMatch(/^skl_/);
    const id = created.body.id as string;

    expect((await ctx.server.request('GET', `/skills/${id}`, { token: ctx.alice.token })).body.slug).toBe('incident-triage');
    expect((await ctx.server.request('GET', '/skills/incident-triage', { token: ctx.alice.token })).body.id).toBe(id);

    const patched = await ctx.server.request('PATCH', `/skills/${id}`, {
      token: ctx.alice.token,
      body: { description: 'Triage alerts', version: '1.1.0-beta.1+build.5', tags: ['ops', 'alerts'], content: '# Steps' },
    });
    expectStatus(patched, 200).toMatchObject({
      description: 'Triage alerts',
      version: '1.1.0-beta.1+build.5',
      tags: ['ops', 'alerts'],
      content: '# Steps',
      status: 'draft',
    });

    expect((await ctx.server.request('DELETE', `/skills/${id}`, { token: ctx.alice.token })).status).toBe(204);
    const gone = await ctx.server.request('GET', `/skills/${id}`, { token: ctx.alice.token });
    expectError(gone, 404, 'not_found');
  });

  it('validates slug, version, tags and content', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ slug: 'Upper' }, 'slug'],
      [{ slug: 'has space' }, 'slug'],
      [{ slug: 'under_score' }, 'slug'],
      [{ slug: '' }, 'slug'],
      [{ slug: 'a'.repeat(101) }, 'slug'],
      [{ version: '1.0' }, 'version'],
      [{ version: 'v1.0.0' }, 'version'],
      [{ tags: Array.from({ length: 51 }, (_, index) => `t${index}`) }, 'tags'],
      [{ tags: ['ok', ''] }, 'tags.1'],
      [{ content: 'x'.repeat(256 * 1024 + 1) }, 'content'],
      // the limit is in UTF-8 bytes: 131,073 two-byte characters are over it
      [{ content: 'é'.repeat(128 * 1024 + 1) }, 'content'],
      [{ scope: 'team' }, 'scope'],
      [{ name: '' }, 'name'],
    ];
    for (const [override, path] of bad) {
      const response = await create(ctx.alice, { name: 'n', slug: 'valid-slug', ...override });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details.issues[0].path).toBe(path);
    }
    const missing = await create(ctx.alice, { name: 'no slug' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.issues[0].path).toBe('slug');

    const atLimits = await create(ctx.alice, {
      name: 'limits',
      slug: 'a'.repeat(100),
      tags: Array.from({ length: 50 }, (_, index) => `t${index}`),
      content: 'x'.repeat(256 * 1024),
    });
    expect(atLimits.status).toBe(201);
    expect(atLimits.body.content).toHaveLength(256 * 1024);
  });

  it('keeps slugs unique per organization (409)', async () => {
    await make(ctx.alice, { slug: 'shared-slug' });
    const duplicate = await create(ctx.alice, { name: 'again', slug: 'shared-slug' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ code: 'conflict', details: { fields: ['slug'] } });
    expect((await create(ctx.bob, { name: 'bob', slug: 'shared-slug' })).status).toBe(201);
  });

  it('keeps slug and scope immutable', async () => {
    const skill = await make(ctx.alice);
    for (const [field, value] of [
      ['slug', 'renamed'],
      ['scope', 'user'],
    ] as const) {
      const response = await ctx.server.request('PATCH', `/skills/${skill.id}`, { token: ctx.alice.token, body: { [field]: value } });
      expect(response.status, field).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'immutable_field', details: { field } });
    }
    const same = await ctx.server.request('PATCH', `/skills/${skill.id}`, {
      token: ctx.alice.token,
      body: { slug: skill.slug, scope: 'org', description: 'same slug and scope are fine' },
    });
    expect(same.status).toBe(200);
    expect(same.body.description).toBe('same slug and scope are fine');
  });

  it('hides a user-scoped skill from everyone but its owner', async () => {
    const own = await make(ctx.alice, { scope: 'user', slug: 'alice-private' });
    expect(own).toMatchObject({ scope: 'user', owner_user_id: ctx.alice.user.id });
    const shared = await make(ctx.alice);

    expect((await ctx.server.request('GET', `/skills/${own.id}`, { token: ctx.alice.token })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', `/skills/${own.id}`, undefined],
      ['GET', '/skills/alice-private', undefined],
      ['PATCH', `/skills/${own.id}`, { description: 'x' }],
      ['DELETE', `/skills/${own.id}`, undefined],
      ['POST', `/skills/${own.id}/submit`, undefined],
    ] as const) {
      const response = await ctx.server.request(method, path, { token: ctx.aliceAdmin.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const adminList = (await ctx.server.request('GET', '/skills?limit=200', { token: ctx.aliceAdmin.token })).body.items as Skill[];
    expect(adminList.map((skill) => skill.id)).toContain(shared.id);
    expect(adminList.map((skill) => skill.id)).not.toContain(own.id);
    const ownerList = (await ctx.server.request('GET', '/skills?scope=user', { token: ctx.alice.token })).body;
    expect(ownerList.items.map((skill: Skill) => skill.id)).toEqual([own.id]);
    expect(ownerList.total).toBe(1);
    // list items leave the content out; GET by id has it
    expect(ownerList.items[0].content).toBeUndefined();
  });

  it('walks draft -> pending_approval -> approved; only approved is usable', async () => {
    const skill = await make(ctx.alice);
    const submitted = await act(ctx.alice, skill.id, 'submit');
    expectStatus(submitted, 200).toMatchObject({ status: 'pending_approval', usable: false, submitted_by: ctx.alice.user.id });

    const approved = await act(ctx.aliceAdmin, skill.id, 'approve', { note: 'looks right' });
    expectStatus(approved, 200).toMatchObject({ status: 'approved', usable: true, reviewed_by: ctx.aliceAdmin.user.id, review_note: 'looks right' });
    expect(typeof approved.body.reviewed_at).toBe('string');

    const listed = await ctx.server.request('GET', '/skills?status=approved', { token: ctx.alice.token });
    expect(listed.body.items.map((item: Skill) => item.id)).toContain(skill.id);
    expect(listed.body.items.every((item: Skill) => item.usable)).toBe(true);
  });

  it('walks pending_approval -> rejected -> pending_approval again', async () => {
    const skill = await make(ctx.alice);
    await act(ctx.alice, skill.id, 'submit');
    const rejected = await act(ctx.aliceAdmin, skill.id, 'reject', { note: 'too vague' });
    expectStatus(rejected, 200).toMatchObject({ status: 'rejected', usable: false, review_note: 'too vague', reviewed_by: ctx.aliceAdmin.user.id });
    const resubmitted = await act(ctx.alice, skill.id, 'submit');
    expect(resubmitted.body.status).toBe('pending_approval');
  });

  it('answers 409 for illegal transitions', async () => {
    const draft = await make(ctx.alice);
    for (const action of ['approve', 'reject']) {
      const response = await act(ctx.alice, draft.id, action);
      expect(response.status, action).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { status: 'draft', action } });
    }
    await act(ctx.alice, draft.id, 'submit');
    const twice = await act(ctx.alice, draft.id, 'submit');
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ code: 'conflict', details: { status: 'pending_approval', action: 'submit' } });

    await act(ctx.alice, draft.id, 'approve');
    for (const action of ['submit', 'approve', 'reject']) {
      const response = await act(ctx.alice, draft.id, action);
      expect(response.status, action).toBe(409);
      expect(response.body.error.details.status).toBe('approved');
    }
    expect((await ctx.server.request('GET', `/skills/${draft.id}`, { token: ctx.alice.token })).body.status).toBe('approved');
  });

  it('four-eyes rule: a submitter cannot review their own submission unless they are the owner', async () => {
    const byAdmin = await make(ctx.alice);
    await act(ctx.aliceAdmin, byAdmin.id, 'submit');
    for (const action of ['approve', 'reject']) {
      const own = await act(ctx.aliceAdmin, byAdmin.id, action);
      expect(own.status, action).toBe(403);
      expect(own.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'own_submission' } });
    }
    expect((await ctx.server.request('GET', `/skills/${byAdmin.id}`, { token: ctx.alice.token })).body.status).toBe('pending_approval');
    const byOwner = await act(ctx.alice, byAdmin.id, 'approve');
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.status).toBe('approved');

    // the owner may approve what they submitted themselves
    const ownerSkill = await make(ctx.alice);
    await act(ctx.alice, ownerSkill.id, 'submit');
    const selfApproved = await act(ctx.alice, ownerSkill.id, 'approve');
    expectStatus(selfApproved, 200).toMatchObject({ status: 'approved', submitted_by: ctx.alice.user.id, reviewed_by: ctx.alice.user.id });
  });

  it('sends an approved skill back to draft when its content changes', async () => {
    const skill = await make(ctx.alice, { content: 'original' });
    await act(ctx.alice, skill.id, 'submit');
    await act(ctx.alice, skill.id, 'approve');

    const metadata = await ctx.server.request('PATCH', `/skills/${skill.id}`, { token: ctx.alice.token, body: { description: 'd', content: 'original' } });
    expect(metadata.body).toMatchObject({ status: 'approved', usable: true, description: 'd' });

    const edited = await ctx.server.request('PATCH', `/skills/${skill.id}`, { token: ctx.alice.token, body: { content: 'changed' } });
    expectStatus(edited, 200).toMatchObject({ status: 'draft', usable: false, content: 'changed', submitted_by: null });
  });

  it('needs skill:manage to write; a member can read', async () => {
    const member = await addMember(ctx.server, ctx.alice, 'member');
    const skill = await make(ctx.alice);
    expect((await ctx.server.request('GET', `/skills/${skill.id}`, { token: member.token })).status).toBe(200);
    const denied = await create(member, { name: 'm', slug: 'member-skill' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'skill:manage' } });
    expect((await act(member, skill.id, 'submit')).status).toBe(403);
  });

  it("answers 404 for another organization's skill, on every verb", async () => {
    const skill = await make(ctx.bob, { slug: 'bobs-skill' });
    for (const [method, path, body] of [
      ['GET', `/skills/${skill.id}`, undefined],
      ['GET', '/skills/bobs-skill', undefined],
      ['PATCH', `/skills/${skill.id}`, { description: 'x' }],
      ['DELETE', `/skills/${skill.id}`, undefined],
      ['POST', `/skills/${skill.id}/submit`, undefined],
      ['POST', `/skills/${skill.id}/approve`, undefined],
      ['POST', `/skills/${skill.id}/reject`, undefined],
    ] as const) {
      const response = await ctx.server.request(method, path, { token: ctx.alice.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await ctx.server.request('GET', `/skills/${skill.id}`, { token: ctx.bob.token })).body.status).toBe('draft');
  });
});
