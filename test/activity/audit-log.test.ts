/**
 * /activity/audit-log against the real server: one entry per successful
 * mutating call across resource kinds (written by the pipeline, not the
 * routes), logins and failed logins, API key rotation, a policy denial in a
 * chat run; filters, signed-cursor paging, org isolation, audit:read.
 */
import { describe, expect, it } from 'vitest';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { startLlmServer } from '../helpers/llm.js';
import { addMember } from '../helpers/members.js';
import { type Session } from '../helpers/server.js';
import { execute, send, wireOrganization } from '../runtime/chat-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { expectError } from '../helpers/expect-status.js';

const READ_ONLY = 'package service.read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "read-only"\n}\n';

describe('/activity/audit-log', () => {
  const ctx = useSuite(async (own) => {
    const started = ownLlm(own, await startLlmServer({ SERVICE_FEATURES_POLICIES: 'true' }));
    return { ...started, owner: await started.server.register('Audited') };
  });

  const auditLog = async (session: Session, query = ''): Promise<any[]> => {
    const answer = await ctx.server.request('GET', `/activity/audit-log?limit=200${query}`, { token: session.token });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.items;
  };
  const call = async (session: { token: string }, method: string, path: string, body?: unknown) => {
    const answer = await ctx.server.request(method, path, { token: session.token, ...(body === undefined ? {} : { body }) });
    expect(answer.status, answer.text).toBeLessThan(300);
    return answer;
  };

  it('records create, update and delete across resource kinds with actor, route, status and request id; never a body', async () => {
    const realm = await call(ctx.owner, 'POST', '/realms', { name: 'audited-realm' });
    const patched = await call(ctx.owner, 'PATCH', `/realms/${realm.body.id}`, { description: 'changed' });
    await call(ctx.owner, 'DELETE', `/realms/${realm.body.id}`);
    const memory = await call(ctx.owner, 'POST', '/memory', { kind: 'note', realm: 'default', text: 'the secret plan is blue' });
    await call(ctx.owner, 'DELETE', `/memory/${memory.body.id}`);
    await call(ctx.owner, 'PATCH', '/settings', { approval_timeout_secs: 120 });
    const key = await call(ctx.owner, 'POST', '/api-keys', { name: 'ci', permissions: ['realm:manage'] });
    await call(ctx.owner, 'POST', `/api-keys/${key.body.id}/rotate`);

    const log = await auditLog(ctx.owner);
    const entries = log.map((entry) => [entry.action, entry.resource.kind, entry.resource.id]);
    expect(entries).toEqual(
      expect.arrayContaining([
        ['create', 'realm', realm.body.id],
        ['update', 'realm', realm.body.id],
        ['delete', 'realm', realm.body.id],
        ['create', 'memory', memory.body.id],
        ['delete', 'memory', memory.body.id],
        ['update', 'settings', null],
        ['create', 'api_key', key.body.id],
        ['rotate', 'api_key', key.body.id],
      ]),
    );
    const update = log.find((entry) => entry.action === 'update' && entry.resource.kind === 'realm');
    expect(update).toMatchObject({
      actor: { type: 'user', id: ctx.owner.user.id, email: ctx.owner.email },
      route: 'PATCH /realms/:id',
      status: 200,
      request_id: patched.headers.get('x-request-id'),
    });
    expect(Date.parse(update.at)).toBeGreaterThan(0);
    // ids only: neither a body nor a key reaches the log
    const text = JSON.stringify(log);
    expect(text).not.toContain('the secret plan');
    expect(text).not.toContain(key.body.key);
    // reads and refusals are not entries
    expect((await ctx.server.request('PATCH', '/realms/rlm_nope', { token: ctx.owner.token, body: { description: 'x' } })).status).toBe(404);
    expect((await auditLog(ctx.owner)).length).toBe(log.length);
  });

  it('an API key is the actor of what it does; its revocation is a delete', async () => {
    const key = await call(ctx.owner, 'POST', '/api-keys', { name: 'robot', permissions: ['realm:manage'] });
    const realm = await call({ token: key.body.key }, 'POST', '/realms', { name: 'made-by-robot' });
    await call(ctx.owner, 'DELETE', `/api-keys/${key.body.id}`);
    const made = await auditLog(ctx.owner, `&actor=${key.body.id}`);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      action: 'create',
      resource: { kind: 'realm', id: realm.body.id },
      actor: { type: 'api_key', id: key.body.id, email: null },
      details: { user_id: ctx.owner.user.id },
    });
    const revoked = await auditLog(ctx.owner, `&kind=api_key&action=delete`);
    expect(revoked.map((entry) => entry.resource.id)).toContain(key.body.id);
  });

  it('records logins and failed logins of a known email (the reason, never the password)', async () => {
    const failed = await ctx.server.request('POST', '/auth/login', { body: { email: ctx.owner.email, password: 'wrong password 123' } });
    expect(failed.status).toBe(401);
    expect((await ctx.server.request('POST', '/auth/login', { body: { email: ctx.owner.email, password: ctx.owner.password } })).status).toBe(200);
    const sessions = await auditLog(ctx.owner, '&kind=session');
    expect(sessions.map((entry) => entry.action)).toEqual(['login_failed', 'login']);
    expect(sessions[0]).toMatchObject({
      actor: { type: 'user', id: ctx.owner.user.id, email: ctx.owner.email },
      route: 'POST /auth/login',
      status: 401,
      details: { reason: 'invalid_credentials' },
      request_id: failed.headers.get('x-request-id'),
    });
    expect(JSON.stringify(sessions)).not.toContain('wrong password');
    // the registration that made the organization is its first entry
    expect((await auditLog(ctx.owner, '&action=register'))[0]).toMatchObject({ resource: { kind: 'organization', id: ctx.owner.organization.id } });
  });

  it('records a policy denial of a tool call, and the policy change in the feed', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm, { approvalWrite: 'allow' });
    const policy = await call(org.session, 'POST', '/policies', { name: 'read_only', rego_code: READ_ONLY });
    ctx.llm.script([{ tool_calls: [{ id: 'c_write', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'x' }) }] }, { text: 'done' }]);
    const stream = await send(ctx.server, org, 'go');
    await stream.ended;
    const runId = stream.headers.get('x-run-id');
    const denials = await eventually(
      async () => {
        const found = await auditLog(org.session, '&action=deny');
        return found.length > 0 ? found : undefined;
      },
      { what: 'the denial in the audit log' },
    );
    expect(denials).toHaveLength(1);
    expect(denials[0]).toMatchObject({
      actor: { type: 'user', id: org.session.user.id },
      resource: { kind: 'tool_call', id: 'memory.store' },
      route: null,
      details: { run_id: runId },
    });
    expect(denials[0].details.decision_id).toMatch(/^pdc_/);
    const feed = await ctx.server.request('GET', '/activity?kind=policy', { token: org.session.token });
    expect(feed.body.items).toHaveLength(1);
    expect(feed.body.items[0]).toMatchObject({ kind: 'policy.changed', subject: { kind: 'policy', id: policy.body.id }, details: { action: 'create' } });
  });

  it('filters by kind, action, actor (id or email) and time window, pages with signed cursors', async () => {
    const org = await ctx.server.register('Filtered');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call(org, 'POST', '/realms', { name: `paged-${i}` })).body.id);
    const realms = await auditLog(org, '&kind=realm');
    expect(realms.map((entry) => entry.resource.id)).toEqual(ids);
    expect(await auditLog(org, `&actor=${encodeURIComponent(org.email)}&kind=realm`)).toHaveLength(5);
    expect(await auditLog(org, '&actor=nobody%40example.test')).toEqual([]);

    // since and until are inclusive bounds on each entry's time
    const window = await auditLog(org, `&kind=realm&since=${encodeURIComponent(realms[1].at)}&until=${encodeURIComponent(realms[3].at)}`);
    expect(window.map((entry) => entry.resource.id)).toEqual(expect.arrayContaining(ids.slice(1, 4)));
    expect(window.every((entry) => entry.at >= realms[1].at && entry.at <= realms[3].at)).toBe(true);
    const after = await ctx.server.request('GET', `/activity/audit-log?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, {
      token: org.token,
    });
    expect(after.body).toMatchObject({ items: [], total: 0 });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await ctx.server.request('GET', `/activity/audit-log?kind=realm&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: org.token });
      expect(page.body.total).toBe(5);
      seen.push(...page.body.items.map((entry: any) => entry.resource.id));
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);

    const bad = await ctx.server.request('GET', '/activity/audit-log?since=yesterday', { token: org.token });
    expectError(bad, 400, 'validation_error');
  });

  it('another organization sees none of it, and its cursors are refused', async () => {
    const other = await ctx.server.register('Elsewhere');
    const mine = await auditLog(other);
    expect(mine.map((entry) => entry.action)).toEqual(['register']);
    expect(JSON.stringify(mine)).not.toContain(ctx.owner.user.id);
    const first = await ctx.server.request('GET', '/activity/audit-log?limit=1', { token: ctx.owner.token });
    const stolen = await ctx.server.request('GET', `/activity/audit-log?cursor=${first.body.next_cursor}`, { token: other.token });
    expectError(stolen, 400, 'invalid_cursor');
  });

  it('members and viewers read the feed but not the audit log; admins read both', async () => {
    const member = await addMember(ctx.server, ctx.owner, 'member');
    const viewer = await addMember(ctx.server, ctx.owner, 'viewer');
    const admin = await addMember(ctx.server, ctx.owner, 'admin');
    for (const session of [member, viewer]) {
      const refused = await ctx.server.request('GET', '/activity/audit-log', { token: session.token });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'audit:read' } });
      expect((await ctx.server.request('GET', '/activity', { token: session.token })).status).toBe(200);
    }
    expect((await ctx.server.request('GET', '/activity/audit-log', { token: admin.token })).status).toBe(200);
  });
});
