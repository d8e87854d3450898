/**
 * The `slack` connector against the fake Slack, through its own Web API
 * client (connectors/slack/web-api.ts): the conformance kit, each tool, pagination,
 * not_in_channel, scope validation and a 429 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import type { ToolContext } from '../../connectors/contract.js';
import { createSlackPlugin } from '../../connectors/slack/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/server.js';
import { failureOf } from '../helpers/tools.js';

let slack: FakeSlack;
let narrow: FakeSlack;
const validConfig: Record<string, unknown> = {};
const plugin = createSlackPlugin();

beforeAll(async () => {
  slack = await startFakeSlack({ scopes: ['chat:write', 'channels:history', 'channels:read'] });
  narrow = await startFakeSlack({ scopes: ['chat:write'] });
  slack.addChannel({ id: 'C0OPS0001', name: 'ops' });
  slack.addChannel({ id: 'C0SECRET1', name: 'secret-plans', bot_member: false });
  for (const name of ['alpha', 'beta', 'gamma', 'delta']) slack.addChannel({ id: `C0${name.toUpperCase().padEnd(7, '0')}`, name });
  validConfig['bot_token'] = slack.bot.token;
  validConfig['base_url'] = slack.apiUrl;
});
afterAll(async () => {
  await slack.close();
  await narrow.close();
});

const tool = (name: string) => {
  const found = plugin.tools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};
const ctx = (): ToolContext => ({ orgId: 'org_test', sourceId: 'src_slack', config: validConfig, signal: new AbortController().signal });

describeConnectorConformance(plugin, {
  validConfig,
  invalidConfig: { bot_token: 'xoxb-refused', base_url: 'http://127.0.0.1:9/api/' },
  toolCalls: [
    { tool: 'post_message', args: { channel: 'C0OPS0001', text: 'hello from the kit' } },
    { tool: 'get_channel_history', args: { channel: 'C0OPS0001' } },
    { tool: 'find_channel', args: { name: '#ops' } },
    { tool: 'get_thread_replies', args: { channel: 'C0OPS0001', thread_ts: '1.000001' }, expect: { error_code: 'thread_not_found' } },
  ],
});

describe('slack connector', () => {
  it('validates a token with the required scopes', async () => {
    expect(await plugin.validate(validConfig, new AbortController().signal)).toMatchObject({ ok: true });
  });

  it('names the missing scopes (x-oauth-scopes of auth.test)', async () => {
    const result = await plugin.validate({ bot_token: narrow.bot.token, base_url: narrow.apiUrl }, new AbortController().signal);
    expect(result).toMatchObject({
      ok: false,
      details: { reason: 'missing_scopes', missing_scopes: ['channels:history'], missing_optional_scopes: ['chat:write.public'] },
    });
    expect(result.message).toContain('channels:history');
  });

  it('refuses a bad token', async () => {
    const result = await plugin.validate({ bot_token: 'xoxb-wrong', base_url: slack.apiUrl }, new AbortController().signal);
    expect(result).toMatchObject({ ok: false, details: { reason: 'invalid_auth' } });
  });

  it('posts a thread reply and reads it back with get_thread_replies', async () => {
    const parent = (await tool('post_message').run({ channel: 'C0OPS0001', text: 'parent' }, ctx())) as { ts: string };
    const reply = await tool('post_message').run({ channel: 'C0OPS0001', text: 'child', thread_ts: parent.ts }, ctx());
    expect(reply).toMatchObject({ channel: 'C0OPS0001', thread_ts: parent.ts });
    const thread = (await tool('get_thread_replies').run({ channel: 'C0OPS0001', thread_ts: parent.ts, limit: 50 }, ctx())) as { messages: { text: string }[] };
    expect(thread.messages.map((message) => message.text)).toEqual(['parent', 'child']);
    const call = slack.calls.find((recorded) => recorded.method === 'chat.postMessage' && recorded.args['text'] === 'child');
    expect(call?.token).toBe(slack.bot.token);
  });

  it('yields not_in_channel, explained, for a channel the bot has not joined', async () => {
    const error = await failureOf(tool('post_message').run({ channel: 'C0SECRET1', text: 'hi' }, ctx()));
    expect(error.code).toBe('not_in_channel');
    expect(error.message).toContain('invite');
  });

  it('pages through conversations.list to find a channel by name', async () => {
    const found = await tool('find_channel').run({ name: 'delta' }, ctx());
    expect(found).toMatchObject({ id: 'C0DELTA00', name: 'delta', is_member: true });
    const listCalls = slack.calls.filter((call) => call.method === 'conversations.list');
    expect(listCalls.length).toBeGreaterThan(1);
    expect(await failureOf(tool('find_channel').run({ name: 'nope' }, ctx()))).toMatchObject({ code: 'channel_not_found' });
  });

  it('waits out a 429 with Retry-After and succeeds', async () => {
    for (const text of ['one', 'two', 'three']) await tool('post_message').run({ channel: 'C0OPS0001', text }, ctx());
    slack.rateLimitNext('conversations.history', 1);
    const before = slack.calls.filter((call) => call.method === 'conversations.history').length;
    const history = (await tool('get_channel_history').run({ channel: 'C0OPS0001', limit: 2 }, ctx())) as { messages: unknown[]; next_cursor: string | null };
    expect(history.messages).toHaveLength(2);
    expect(history.messages).toMatchObject([{ text: 'three' }, { text: 'two' }]);
    expect(history.next_cursor).not.toBeNull();
    expect(slack.calls.filter((call) => call.method === 'conversations.history').length).toBe(before + 2);
  });
});
