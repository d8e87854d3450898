/**
 * /activity and /notifications against the real server: a task run started
 * and ended, a failed run and a failed source sync (feed and notifications),
 * a pending approval (notifications for the run's user and the admins, not
 * other members), a webhook delivery, mark-read and read-all, another user's
 * notification as 404.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownPluginsFile, useSuite } from '../helpers/suite.js';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startWebhookReceiver } from '../fakes/webhook-receiver/server.js';
import { addMember } from '../helpers/members.js';
import { startTestServer, type Session } from '../helpers/server.js';
import { execute, send, startFakeLlmServer, wireOrganization } from '../runtime/chat-helpers.js';
import { startFakeTracker } from '../fakes/tracker/server.js';
import { createTask, runReaches } from '../tasks/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const trackerPlugin = fileURLToPath(new URL('../fixtures/connectors/tracker-plugin.ts', import.meta.url));

describe('/activity and /notifications', () => {
  const ctx = useSuite(async (own) => {
    const llm = own(await startFakeLlmServer());
    const tracker = own(await startFakeTracker());
    const receiver = own(await startWebhookReceiver());
    return {
      llm,
      tracker,
      receiver,
      server: own(await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY, PLUGINS_FILE: ownPluginsFile(own, [trackerPlugin]) })),
    };
  });

  const feed = async (session: Session, query = ''): Promise<any[]> => {
    const answer = await ctx.server.request('GET', `/activity?limit=200${query}`, { token: session.token });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.items;
  };
  const inbox = async (session: Session, query = ''): Promise<any[]> => {
    const answer = await ctx.server.request('GET', `/notifications?limit=200${query}`, { token: session.token });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.items;
  };
  /** waits until `read` returns a list with an entry matching `match` */
  const waitFor = (read: () => Promise<any[]>, match: (entry: any) => boolean, what: string) =>
    eventually(async () => (await read()).find(match), { what: what });

  it('shows a task run started and ended', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    const task = await createTask(ctx.server, org.session, { name: 'report', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    ctx.llm.script([{ text: 'done' }]);
    const fire = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: org.session.token });
    await runReaches(ctx.server, org.session, task.id, fire.body.run_id, 'succeeded');
    const ended = await waitFor(
      () => feed(org.session),
      (entry) => entry.kind === 'run.ended',
      'run.ended',
    );
    const runs = await feed(org.session, '&kind=run');
    expect(runs.map((entry) => [entry.kind, entry.subject.id])).toEqual([
      ['run.started', fire.body.run_id],
      ['run.ended', fire.body.run_id],
    ]);
    expect(ended).toMatchObject({
      actor: { type: 'user', id: org.session.user.id, email: org.session.email },
      details: { run_kind: 'task', task_id: task.id, status: 'succeeded' },
    });
    // a run that succeeded notifies nobody
    expect(await inbox(org.session)).toEqual([]);
  });

  it('a failed run is in the feed and notifies the user it ran for; mark-read and the unread filter', async () => {
    const owner = await ctx.server.register('No model');
    // no LLM configured: the run fails before its agent starts
    const task = await createTask(ctx.server, owner, { name: 'doomed', trigger: { kind: 'webhook' }, input: { instruction: 'go' } });
    const fire = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    await runReaches(ctx.server, owner, task.id, fire.body.run_id, 'failed');
    const ended = await waitFor(
      () => feed(owner, '&kind=run.ended'),
      () => true,
      'run.ended',
    );
    expect(ended).toMatchObject({ subject: { kind: 'run', id: fire.body.run_id }, details: { status: 'failed', reason: 'llm_unconfigured' } });
    const [notification] = await eventually(
      async () => {
        const items = await inbox(owner);
        return items.length > 0 ? items : undefined;
      },
      { what: 'the run.failed notification' },
    );
    expect(notification).toMatchObject({ kind: 'run.failed', read: false, read_at: null, subject: { kind: 'run', id: fire.body.run_id } });
    expect(notification.title).toContain('llm_unconfigured');

    const read = await ctx.server.request('POST', `/notifications/${notification.id}/read`, { token: owner.token });
    expectStatus(read, 200).toMatchObject({ id: notification.id, read: true });
    expect(Date.parse(read.body.read_at)).toBeGreaterThan(0);
    expect(await inbox(owner, '&unread=true')).toEqual([]);
    expect(await inbox(owner)).toHaveLength(1);
  });

  it('a failed source sync is in the feed and notifies the owners and admins', async () => {
    const owner = await ctx.server.register('Syncing');
    const admin = await addMember(ctx.server, owner, 'admin');
    const member = await addMember(ctx.server, owner, 'member');
    const source = await ctx.server.request('POST', '/sources', {
      token: owner.token,
      body: { name: 'Tracker', connector: 'tracker', config: { base_url: ctx.tracker.url, token: 'good-token', project: 'web' } },
    });
    expect(source.status, source.text).toBe(201);
    ctx.tracker.failWith = 502;
    try {
      expect((await ctx.server.request('POST', `/sources/${source.body.id}/sync`, { token: owner.token })).status).toBe(202);
      const failed = await waitFor(
        () => feed(owner, '&kind=source'),
        (entry) => entry.kind === 'source.sync_failed',
        'source.sync_failed',
      );
      expect(failed).toMatchObject({
        actor: { type: 'system' },
        subject: { kind: 'source', id: source.body.id },
        details: { connector: 'tracker', error_code: 'upstream_error' },
      });
      expect(JSON.stringify(failed)).not.toContain('good-token');
    } finally {
      ctx.tracker.failWith = null;
    }
    for (const session of [owner, admin]) {
      const notice = await waitFor(
        () => inbox(session),
        (entry) => entry.kind === 'source.sync_failed',
        'the sync notification',
      );
      expect(notice.subject).toEqual({ kind: 'source', id: source.body.id });
    }
    expect(await inbox(member)).toEqual([]);
  });

  it("a pending approval notifies the run's user and the admins; its decision is in the feed; read-all; others' notifications are 404", async () => {
    const org = await wireOrganization(ctx.server, ctx.llm, { approvalWrite: 'ask' });
    const admin = await addMember(ctx.server, org.session, 'admin');
    const member = await addMember(ctx.server, org.session, 'member');
    ctx.llm.script([{ tool_calls: [{ id: 'c1', ...execute('memory.store', { kind: 'note', realm: 'default', text: 'remember' }) }] }, { text: 'stored' }]);
    const stream = await send(ctx.server, org, 'store it');
    const asked = await stream.waitFor((event) => event.event === 'approval_required');
    const approvalId = asked.data.approval_id as string;
    for (const session of [org.session, admin]) {
      const notice = await waitFor(
        () => inbox(session, '&unread=true'),
        (entry) => entry.kind === 'approval.requested',
        'the approval notification',
      );
      expect(notice).toMatchObject({ subject: { kind: 'approval', id: approvalId }, details: { tool: 'memory.store', run_kind: 'chat' } });
    }
    expect(await inbox(member)).toEqual([]);

    const answer = await ctx.server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, {
      token: org.session.token,
      body: { approved: true },
    });
    expect(answer.status, answer.text).toBe(200);
    await stream.ended;
    const decided = await waitFor(
      () => feed(org.session, '&kind=approval'),
      (entry) => entry.kind === 'approval.decided',
      'approval.decided',
    );
    expect(decided).toMatchObject({ actor: { type: 'user', id: org.session.user.id }, details: { decision: 'approved', approval_id: approvalId } });
    expect((await feed(org.session, '&kind=approval.requested'))[0].subject.id).toBe(approvalId);
    // the answer is in the audit log as a decision
    const audited = await ctx.server.request('GET', '/activity/audit-log?kind=approval', { token: org.session.token });
    expect(audited.body.items[0]).toMatchObject({ action: 'decide', resource: { kind: 'approval', id: approvalId } });

    // someone else's notification is as absent as another organization's
    const adminNotice = (await inbox(admin))[0];
    const foreign = await ctx.server.request('POST', `/notifications/${adminNotice.id}/read`, { token: org.session.token });
    expectError(foreign, 404, 'not_found');
    const stranger = await ctx.server.register('Stranger');
    expect((await ctx.server.request('POST', `/notifications/${adminNotice.id}/read`, { token: stranger.token })).status).toBe(404);

    const all = await ctx.server.request('POST', '/notifications/read-all', { token: admin.token });
    expect(all.status).toBe(200);
    expect(all.body.updated).toBeGreaterThanOrEqual(1);
    expect(await inbox(admin, '&unread=true')).toEqual([]);
    // the run's user still has theirs unread
    expect((await inbox(org.session, '&unread=true')).length).toBeGreaterThanOrEqual(1);
    expect((await ctx.server.request('POST', '/notifications/read-all', { token: admin.token })).body.updated).toBe(0);
  });

  it('webhook deliveries (delivered, failed) are in the feed; API keys have no inbox; another organization sees no feed', async () => {
    const owner = await ctx.server.register('Deliveries');
    const secret = 'activity-shared-secret-0001';
    ctx.receiver.acceptSecrets([secret]);
    const good = await ctx.server.request('POST', '/webhooks', { token: owner.token, body: { name: 'ops', url: ctx.receiver.url, secret, retries: 0 } });
    // the receiver does not know this secret: 401, and no retries
    const bad = await ctx.server.request('POST', '/webhooks', {
      token: owner.token,
      body: { name: 'stale', url: ctx.receiver.url, secret: `${secret}-old`, retries: 0 },
    });
    expect(good.status, good.text).toBe(201);
    expect(bad.status, bad.text).toBe(201);
    for (const hook of [good, bad])
      expect((await ctx.server.request('POST', `/webhooks/${hook.body.id}/test`, { token: owner.token })).status).toBeLessThan(300);
    const delivered = await waitFor(
      () => feed(owner, '&kind=webhook'),
      (entry) => entry.kind === 'webhook.delivery_succeeded',
      'the delivery',
    );
    expect(delivered).toMatchObject({ details: { webhook_id: good.body.id, webhook_name: 'ops', event: 'webhook.test', http_status: 200, attempts: 1 } });
    const failed = await waitFor(
      () => feed(owner, '&kind=webhook.delivery_failed'),
      () => true,
      'the failed delivery',
    );
    expect(failed).toMatchObject({ subject: { kind: 'webhook_delivery' }, details: { webhook_id: bad.body.id, http_status: 401 } });
    expect(JSON.stringify(await feed(owner))).not.toContain(secret);

    const key = await ctx.server.request('POST', '/api-keys', { token: owner.token, body: { name: 'k', permissions: ['activity:read'] } });
    const refused = await ctx.server.request('GET', '/notifications', { token: key.body.key });
    expect(refused.status).toBe(403);
    expect((await ctx.server.request('GET', '/activity', { token: key.body.key })).status).toBe(200);

    const other = await ctx.server.register('Quiet');
    expect(await feed(other)).toEqual([]);
  });
});
