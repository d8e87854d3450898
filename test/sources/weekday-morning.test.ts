/**
 * The spec's weekday-morning composition, end to end: sources created and
 * validated through /sources, then an agent run (fake LLM) that searches the
 * catalog, reads stale pull requests from the code host and failed builds
 * from the build server, and posts a summary to the chat platform; the post
 * is a write, so it waits for a person's approval before it reaches Slack.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownPluginsFile, useSuite } from '../helpers/suite.js';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startFakeGithub } from '../fakes/github/server.js';
import { startFakeJenkins } from '../fakes/jenkins/server.js';
import { startFakeSlack } from '../fakes/slack/server.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { startTestServer } from '../helpers/server.js';
import { send, startFakeLlmServer, wireOrganization, execute, streamedText } from '../runtime/chat-helpers.js';

const HOUR = 3_600_000;

describe('weekday morning: stale PRs + failed builds -> a chat summary, with the write approved', () => {
  const ctx = useSuite(async (own) => {
    const [llm, github, jenkins, slack] = await Promise.all([startFakeLlmServer(), startFakeGithub(), startFakeJenkins(), startFakeSlack()]);
    for (const fake of [llm, github, jenkins, slack]) own(fake);
    seedGithub(github);
    jenkins.users.set('ci-bot', { token: 'jenkins-token-1' });
    const now = Date.now();
    jenkins.jobs.push({
      name: 'api-build',
      kind: 'job',
      builds: [
        { number: 41, result: 'SUCCESS', timestamp: now - 5 * HOUR, duration: 60_000, causes: [{ kind: 'timer' }], console: 'ok' },
        { number: 42, result: 'FAILURE', timestamp: now - 2 * HOUR, duration: 90_000, causes: [{ kind: 'scm' }], console: 'npm test\n1 failing' },
      ],
    });
    slack.addChannel({ id: 'C0ENG0001', name: 'eng', bot_member: true });
    const server = own(
      await startTestServer({
        LLM_API_KEY: FAKE_LLM_API_KEY,
        PLUGINS_FILE: ownPluginsFile(own, [fileURLToPath(new URL('../fixtures/connectors/jenkins-plugin.ts', import.meta.url))]),
      }),
    );
    return { llm, github, jenkins, slack, server, org: await wireOrganization(server, llm, { approvalWrite: 'ask' }) };
  });

  it('runs the composition through the real API', async () => {
    const token = ctx.org.session.token;
    const sources: Record<string, string> = {};
    for (const [name, connector, config] of [
      ['Code host', 'github', { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: ctx.github.url }],
      ['Build server', 'jenkins', { url: ctx.jenkins.url, username: 'ci-bot', api_token: 'jenkins-token-1' }],
      ['Team chat', 'slack', { bot_token: ctx.slack.bot.token, base_url: ctx.slack.apiUrl }],
    ] as const) {
      const created = await ctx.server.request('POST', '/sources', { token, body: { name, connector, config } });
      expect(created.status, created.text).toBe(201);
      const tested = await ctx.server.request('GET', `/sources/${created.body.id}/test`, { token });
      expect(tested.status, tested.text).toBe(200);
      expect(tested.body.source.status).toBe('synced');
      sources[connector] = created.body.id;
    }

    ctx.llm.script([
      { tool_calls: [{ id: 's1', name: 'search_connector_tools', arguments: { query: 'stale pull requests failed builds post message' } }] },
      {
        tool_calls: [
          { id: 'r1', ...execute('github.list_pull_requests', { repo: 'acme/api', stale_days: 14 }) },
          { id: 'r2', ...execute('jenkins.list_builds', { job: 'api-build', only_failed: true }) },
        ],
      },
      { tool_calls: [{ id: 'w1', ...execute('slack.post_message', { channel: 'C0ENG0001', text: 'Morning: 2 stale PRs (#7, #9); api-build #42 failed.' }) }] },
      { text: 'Posted the morning summary to #eng.' },
    ]);
    const stream = await send(ctx.server, ctx.org, 'Collect stale PRs and failed builds, then post a summary to #eng.');
    expect(stream.status).toBe(200);

    const approval = await stream.waitFor((event) => event.event === 'approval_required');
    expect(approval.data).toMatchObject({ tool: 'slack.post_message', args: { channel: 'C0ENG0001' } });
    // nothing reached Slack before a person said yes
    expect(ctx.slack.messages('C0ENG0001')).toEqual([]);

    const searched = stream.events.find((event) => event.event === 'tool_result' && event.data.tool_call_id === 's1');
    const found = searched?.data.result.result.tools.map((tool: { name: string }) => tool.name);
    expect(found).toEqual(expect.arrayContaining(['github.list_pull_requests', 'jenkins.list_builds', 'slack.post_message']));
    const pulls = stream.events.find((event) => event.event === 'tool_result' && event.data.tool_call_id === 'r1')?.data.result.result;
    expect(JSON.stringify(pulls)).toContain('forgotten refactor');
    expect(JSON.stringify(pulls)).not.toContain('fresh change');
    const builds = stream.events.find((event) => event.event === 'tool_result' && event.data.tool_call_id === 'r2')?.data.result.result;
    expect(builds.items.map((build: { number: number }) => build.number)).toEqual([42]);

    const answered = await ctx.server.request('POST', `/chat/conversations/${ctx.org.conversationId}/approvals/${approval.data.approval_id}`, {
      token,
      body: { approved: true },
    });
    expect(answered.status, answered.text).toBeLessThan(300);
    const end = await stream.waitFor((event) => event.event === 'message_end');
    expect(end.data.finish_reason).toBe('end_turn');
    await stream.ended;

    const posted = ctx.slack.messages('C0ENG0001');
    expect(posted.map((message) => message.text)).toEqual(['Morning: 2 stale PRs (#7, #9); api-build #42 failed.']);
    const postResult = stream.events.find((event) => event.event === 'tool_result' && event.data.tool_call_id === 'w1')?.data.result;
    expect(postResult.result).toMatchObject({ channel: 'C0ENG0001' });
    expect(streamedText(stream.events)).toBe('Posted the morning summary to #eng.');
  });
});
