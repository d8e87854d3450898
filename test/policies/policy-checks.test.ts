/**
 * A synced git source in the tool-call gate's decisions (chat runs through the
 * fake LLM), POST /policies/simulate replaying those decisions against
 * proposed policies, and POST /policies/:id/test running test_ rules.
 */
import { describe, expect, it } from 'vitest';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { startWiredOrg } from '../helpers/llm.js';
import { execute, send } from '../runtime/chat-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { createGitRepo } from './git-repo.js';
import { expectError } from '../helpers/expect-status.js';

const STORE = { kind: 'note', realm: 'default', text: 'deploys on Tuesday' };
const NO_STORE = 'package team.guard\n\ndeny contains "no memory.store from git" if input.resource.tool == "memory.store"\n';
const NO_RECALL = 'package service.no_recall\n\ndeny contains "recall is off" if input.resource.tool == "memory.recall"\n';

describe('policy sources in the gate, simulate, policy tests', () => {
  const ctx = useSuite(async (own) => ({
    ...ownLlm(own, await startWiredOrg({ SERVICE_FEATURES_POLICIES: 'true', POLICY_GIT_ALLOW_LOCAL: 'true' }, { approvalWrite: 'allow' })),
    repo: own(createGitRepo(), (repo) => repo.remove()),
  }));

  const req = (method: string, path: string, body?: unknown, session = ctx.org.session) =>
    ctx.server.request(method, path, { token: session.token, ...(body === undefined ? {} : { body }) });
  const reply = async (calls: { id: string; name: string; arguments: Record<string, unknown> }[]) => {
    ctx.llm.script([{ tool_calls: calls }, { text: 'done' }]);
    const stream = await send(ctx.server, ctx.org, 'go');
    await stream.ended;
    return new Map<string, any>(stream.events.filter((event) => event.event === 'tool_result').map((event) => [event.data.tool_call_id, event.data.result]));
  };
  const decisions = (count: number) =>
    eventually(
      async () => {
        const answer = await req('GET', '/policies/decisions');
        return answer.body.items.length === count ? (answer.body.items as any[]) : undefined;
      },
      { what: `${count} decisions` },
    );

  it("a synced source's deny rules decide tool calls, and the decision names the new bundle revision", async () => {
    const calls = [
      { id: 'c_read', ...execute('memory.recall', { query: 'deploys' }) },
      { id: 'c_write', ...execute('memory.store', STORE) },
    ];
    const open = await reply(calls);
    expect(open.get('c_write')).toHaveProperty('result');

    ctx.repo.commit({ 'guard.rego': NO_STORE });
    const source = await req('POST', '/policies/sources', { name: 'team', source_type: 'git_repo', git_url: ctx.repo.bare });
    expect(source.status, source.text).toBe(201);
    const synced = await req('POST', `/policies/sources/${source.body.id}/sync`);
    expect(synced.status, synced.text).toBe(200);

    const guarded = await reply(calls);
    expect(guarded.get('c_read')).toHaveProperty('result');
    expect(guarded.get('c_write').error).toMatchObject({ code: 'policy_denied', details: { messages: ['no memory.store from git'] } });
    const log = await decisions(4);
    expect(log.map((entry) => [entry.input.resource.tool, entry.result])).toEqual([
      ['memory.recall', 'allow'],
      ['memory.store', 'allow'],
      ['memory.recall', 'allow'],
      ['memory.store', 'deny'],
    ]);
    expect(log[0].revision).toBe('empty');
    expect(log[3].revision).toMatch(/^[0-9a-f]{16}$/);
  });

  it('simulate replays the recorded decisions against proposed policies and lists the calls whose outcome changes', async () => {
    const answer = await req('POST', '/policies/simulate', { policies: [{ name: 'no_recall', rego: NO_RECALL }] });
    expect(answer.status, answer.text).toBe(200);
    const log = await decisions(4);
    // the proposal joins the organization's bundle (with the git source): the store made before the sync changes too
    expect(answer.body).toMatchObject({ evaluated: 4, unchanged_count: 1, max_decisions: 1000, truncated: false });
    expect(answer.body.changed).toEqual([
      { decision_id: log[0].id, tool: 'memory.recall', at: log[0].at, before: 'allow', after: 'deny', messages: ['recall is off'] },
      { decision_id: log[1].id, tool: 'memory.store', at: log[1].at, before: 'allow', after: 'deny', messages: ['no memory.store from git'] },
      { decision_id: log[2].id, tool: 'memory.recall', at: log[2].at, before: 'allow', after: 'deny', messages: ['recall is off'] },
    ]);
    // nothing proposed: the current bundle (with the git source) against what was recorded before it
    const current = await req('POST', '/policies/simulate', { days: 1 });
    expect(current.body.changed.map((change: any) => [change.decision_id, change.before, change.after])).toEqual([[log[1].id, 'allow', 'deny']]);
    // the cap bounds the replay
    const limited = await req('POST', '/policies/simulate', { limit: 3 });
    expect(limited.body).toMatchObject({ evaluated: 3, truncated: true });
    // another organization has no decisions
    const other = await ctx.server.register();
    expect((await req('POST', '/policies/simulate', {}, other)).body).toMatchObject({ evaluated: 0, changed: [] });
    // nothing was enabled by simulating
    expect((await req('GET', '/policies')).body.items).toEqual([]);
  });

  it('simulate refuses proposals that do not compile or name another package', async () => {
    const broken = await req('POST', '/policies/simulate', { policies: [{ name: 'x', rego: 'package service.x\nallow if {\n' }] });
    expectError(broken, 400, 'rego_parse_error');
    const wrong = await req('POST', '/policies/simulate', { policies: [{ name: 'x', rego: 'package other\n' }] });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('service.x');
    expect((await req('POST', '/policies/simulate', { days: 91 })).status).toBe(400);
  });

  it("runs a policy's test_ rules like opa test: pass, fail and error, each with its duration", async () => {
    const rego = [
      'package service.tested',
      '',
      'deny contains "writes are off" if input.action == "write"',
      '',
      'test_denies_writes if "writes are off" in deny with input as {"action": "write"}',
      'test_allows_reads if count(deny) == 0 with input as {"action": "read"}',
      'test_wrong if count(deny) == 1 with input as {"action": "read"}',
      'test_errors if conflicted == 1',
      'conflicted := 1',
      'conflicted := 2 if true',
      '',
    ].join('\n');
    const created = await req('POST', '/policies', { name: 'tested', rego_code: rego, enabled: false });
    expect(created.status, created.text).toBe(201);
    const run = await req('POST', `/policies/${created.body.id}/test`);
    expect(run.status, run.text).toBe(200);
    expect(run.body.passed).toBe(2);
    expect(run.body.failed).toBe(2);
    const byName = Object.fromEntries(run.body.results.map((entry: any) => [entry.name, entry]));
    expect(Object.keys(byName).sort()).toEqual(['test_allows_reads', 'test_denies_writes', 'test_errors', 'test_wrong']);
    expect(byName.test_denies_writes.result).toBe('pass');
    expect(byName.test_allows_reads.result).toBe('pass');
    expect(byName.test_wrong).toMatchObject({ result: 'fail', message: 'undefined' });
    expect(byName.test_errors.result).toBe('error');
    expect(byName.test_errors.message).toContain('eval_conflict_error');
    for (const entry of run.body.results) expect(typeof entry.duration_ms).toBe('number');
    // by name too; another organization's id is 404
    expect((await req('POST', '/policies/tested/test')).body.passed).toBe(2);
    expect((await req('POST', `/policies/${created.body.id}/test`, undefined, await ctx.server.register())).status).toBe(404);
  });
});
