/**
 * Every option of the agent-type catalog takes effect in every run kind: the
 * same agent is run as a chat reply, a task run and a Slack binding run
 * against the fake LLM, and what the model was sent (model, temperature,
 * system prompt, tool results) or what the run did (turns, writes) is checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.js';
import type { FakeTurn, RecordedRequest } from '../fakes/llm/server.js';
import type { Session } from '../helpers/server.js';
import { connectChannel, mention, settle, startWorld, type ChannelWorld } from '../channels/helpers.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { eventually } from '../helpers/eventually.js';
import { createTask } from '../tasks/helpers.js';
import { execute, send } from './chat-helpers.js';

type Kind = 'chat' | 'task' | 'binding';
const KINDS: readonly Kind[] = ['chat', 'task', 'binding'];

interface AgentOrg {
  readonly session: Session;
  readonly conversationId: string;
  readonly taskId: string;
  readonly eventsUrl: string;
}

interface SentMessage {
  readonly role: string;
  readonly content: string;
}

let world: ChannelWorld;
let github: FakeGithub;
let counter = 0;

beforeAll(async () => {
  world = await startWorld();
  github = await startFakeGithub();
  seedGithub(github);
});
afterAll(async () => {
  await world.close();
  await github.stop();
});

/**
 * A fresh organization with one agent of the type and config, reachable as a
 * conversation, a webhook task and a Slack binding (writes need no approval
 * everywhere, so a refused write is the agent's doing, not an approval's).
 */
async function agentOrg(agentType: string, config: Record<string, unknown> | null, options: { sources?: boolean } = {}): Promise<AgentOrg> {
  const { server } = world;
  const session = await server.register();
  counter += 1;
  const name = `agent-${counter}`;
  if (config === null) {
    // an agent stored before options left the catalog: written straight to the store, as an older version left it
    await server.service.services.collections.agents.insert(session.organization.id as never, {
      agent_type: agentType,
      name,
      config: { focus: ['tests'], max_comments: 3, approve_when_clean: true, realms: ['default'] },
      enabled: true,
    });
  } else {
    const created = await server.request('POST', '/agents', { token: session.token, body: { agent_type: agentType, name, config } });
    if (created.status !== 201) throw new Error(`agent: ${created.status} ${created.text}`);
  }
  const connected = await connectChannel(world, { session, binding: { agent: name, approval_write: 'allow' } });
  let sourceIds: string[] = [];
  if (options.sources === true) {
    const source = await server.request('POST', '/sources', {
      token: session.token,
      body: { name: 'GitHub acme', connector: 'github', config: { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: github.url } },
    });
    if (source.status !== 201) throw new Error(`source: ${source.status} ${source.text}`);
    sourceIds = [source.body.id as string];
  }
  const conversation = await server.request('POST', '/chat/conversations', {
    token: session.token,
    body: { title: 'options', agent: name, approval_defaults: { write: 'allow' } },
  });
  if (conversation.status !== 201) throw new Error(`conversation: ${conversation.status} ${conversation.text}`);
  const task = await createTask(server, session, {
    name: `task-${counter}`,
    agent: name,
    trigger: { kind: 'webhook' },
    input_template: { instruction: '{{trigger.body.text}}' },
    approval_defaults: { write: 'allow' },
    enabled_source_ids: sourceIds,
  });
  return { session, conversationId: conversation.body.id as string, taskId: task.id as string, eventsUrl: connected.eventsUrl };
}

/** Runs `text` through the agent as `kind` with the model's turns scripted; the model's requests and the run's end status. */
async function run(kind: Kind, org: AgentOrg, text: string, turns: readonly FakeTurn[]): Promise<{ requests: RecordedRequest[]; status: string }> {
  const { server, llm, slack } = world;
  llm.reset();
  llm.script(turns);
  let status: string;
  if (kind === 'chat') {
    const stream = await send(server, { session: org.session, conversationId: org.conversationId }, text);
    await stream.ended;
    const messages = await server.request('GET', `/chat/conversations/${org.conversationId}/messages?limit=200`, { token: org.session.token });
    status = String(messages.body.items.at(-1).status);
  } else if (kind === 'task') {
    const fired = await server.request('POST', `/tasks/${org.taskId}/run`, { token: org.session.token, body: { body: { text } } });
    if (fired.status !== 202) throw new Error(`fire: ${fired.status} ${fired.text}`);
    status = await eventually(
      async () => {
        const read = await server.request('GET', `/tasks/${org.taskId}/runs/${fired.body.run_id}`, { token: org.session.token });
        const current = String(read.body.status);
        return current === 'pending' || current === 'running' ? undefined : current;
      },
      { what: 'the task run to end' },
    );
  } else {
    slack.eventsUrl = org.eventsUrl;
    await slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(slack, text) });
    await settle(world);
    const runs = await server.service.services.collections.agentRuns.findAll(org.session.organization.id as never, { kind: 'chat' });
    status = String(runs.at(-1)?.status);
  }
  await settle(world);
  return { requests: [...llm.requests], status };
}

const messagesOf = (request: RecordedRequest | undefined): SentMessage[] => (request?.body?.['messages'] ?? []) as SentMessage[];
const systemOf = (request: RecordedRequest | undefined): string => messagesOf(request).find((message) => message.role === 'system')?.content ?? '';
const toolResults = (request: RecordedRequest | undefined): any[] =>
  messagesOf(request)
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content));

const ANSWER: FakeTurn = { text: 'done' };
/** a model that calls a write tool (memory.store), then answers */
const storeTurns = (id: string): FakeTurn[] => [
  { tool_calls: [{ id, ...execute('memory.store', { kind: 'fact', realm: 'default', text: `written by ${id}` }) }] },
  ANSWER,
];

async function memoryTexts(org: AgentOrg): Promise<string[]> {
  const list = await world.server.request('GET', '/memory?limit=200', { token: org.session.token });
  return (list.body.items as { text: string }[]).map((item) => item.text);
}

describe.each(KINDS)('agent options in %s runs', (kind) => {
  it('model and temperature reach the LLM request; without them the organization model and 0.2', async () => {
    const tuned = await agentOrg('assistant', { model: 'gpt-agent-model', temperature: 0.9 });
    const { requests, status } = await run(kind, tuned, 'hello', [ANSWER]);
    expect(status).toMatch(/^(succeeded|complete)$/);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.body).toMatchObject({ model: 'gpt-agent-model', temperature: 0.9 });

    const plain = await agentOrg('summarizer', {});
    const defaults = await run(kind, plain, 'hello', [ANSWER]);
    expect(defaults.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2 });
  });

  it('max_turns stops a model that keeps calling tools after that many turns', async () => {
    const org = await agentOrg('assistant', { max_turns: 2 });
    const search: FakeTurn = { tool_calls: [{ name: 'search_connector_tools', arguments: { query: 'pull requests' } }] };
    const { requests, status } = await run(kind, org, 'keep going', [search, search, search, search, ANSWER]);
    expect(requests).toHaveLength(2);
    expect(status).toBe('failed');
  });

  it('system_prompt replaces the built-in instructions; type options are appended as instructions', async () => {
    const custom = await agentOrg('summarizer', { system_prompt: 'You are Zed, a terse summarizer.', format: 'bullets', max_words: 50 });
    const sent = systemOf((await run(kind, custom, 'summarize', [ANSWER])).requests[0]);
    expect(sent.startsWith('You are Zed, a terse summarizer.')).toBe(true);
    expect(sent).not.toContain('search_connector_tools finds the tools');
    expect(sent).toContain('Write the summary as a bulleted list, at most 50 words.');

    const builtIn = systemOf((await run(kind, await agentOrg('summarizer', {}), 'summarize', [ANSWER])).requests[0]);
    expect(builtIn).toContain('search_connector_tools finds the tools');
    expect(builtIn).toContain('You condense threads');
    expect(builtIn).toContain('Write the summary as prose paragraphs, at most 200 words.');

    const reviewer = systemOf((await run(kind, await agentOrg('code_reviewer', { focus: ['performance', 'style'] }), 'review', [ANSWER])).requests[0]);
    expect(reviewer).toContain('Review focus: performance, style.');
    const defaultFocus = systemOf((await run(kind, await agentOrg('code_reviewer', {}), 'review', [ANSWER])).requests[0]);
    expect(defaultFocus).toContain('Review focus: correctness, security, tests.');

    const sre = systemOf((await run(kind, await agentOrg('sre', { escalation_channel: '#ops-escalations' }), 'why', [ANSWER])).requests[0]);
    expect(sre).toContain('name the escalation channel #ops-escalations');
    const sreNone = systemOf((await run(kind, await agentOrg('sre', {}), 'why', [ANSWER])).requests[0]);
    expect(sreNone).not.toContain('escalation channel');
  });

  it('an sre agent is read-only by default: a write is refused with read_only whatever the approval defaults', async () => {
    const org = await agentOrg('sre', {});
    const { requests, status } = await run(kind, org, 'note this', storeTurns('w1'));
    expect(status).toMatch(/^(succeeded|complete)$/);
    const [result] = toolResults(requests[1]);
    expect(result).toMatchObject({ error: { code: 'read_only', details: { tool: 'memory.store' } } });
    expect(result.error.message).toContain('read-only');
    expect(systemOf(requests[0])).toContain('This agent is read-only');
    expect(await memoryTexts(org)).toEqual([]);

    const explicit = await agentOrg('sre', { read_only: true });
    expect(toolResults((await run(kind, explicit, 'note this', storeTurns('w2'))).requests[1])[0]).toMatchObject({ error: { code: 'read_only' } });
    expect(await memoryTexts(explicit)).toEqual([]);
  });

  it('read_only false lets an sre agent write; other types are not read-only', async () => {
    const writer = await agentOrg('sre', { read_only: false });
    const { requests } = await run(kind, writer, 'note this', storeTurns('w3'));
    expect(toolResults(requests[1])[0]).not.toHaveProperty('error');
    expect(systemOf(requests[0])).not.toContain('read-only');
    expect(await memoryTexts(writer)).toEqual(['written by w3']);

    const assistant = await agentOrg('assistant', {});
    await run(kind, assistant, 'note this', storeTurns('w4'));
    expect(await memoryTexts(assistant)).toEqual(['written by w4']);
  });

  it('recall_memory (default true) puts the entries relevant to the message in the system prompt; memory_realms narrows them', async () => {
    const remember = async (org: AgentOrg, realm: string, text: string): Promise<void> => {
      const stored = await world.server.request('POST', '/memory', { token: org.session.token, body: { kind: 'fact', realm, text } });
      expect(stored.status, stored.text).toBe(201);
    };
    const recalling = await agentOrg('assistant', {});
    await remember(recalling, 'default', 'The zebra service deploys on Tuesdays.');
    await remember(recalling, 'default', 'Lunch is at noon.');
    const sent = systemOf((await run(kind, recalling, 'when does zebra deploy?', [ANSWER])).requests[0]);
    expect(sent).toContain('The zebra service deploys on Tuesdays.');
    expect(sent).not.toContain('Lunch is at noon.');

    const off = await agentOrg('assistant', { recall_memory: false });
    await remember(off, 'default', 'The zebra service deploys on Tuesdays.');
    expect(systemOf((await run(kind, off, 'when does zebra deploy?', [ANSWER])).requests[0])).not.toContain('zebra service');

    const narrowed = await agentOrg('assistant', { memory_realms: ['staging'] });
    const realm = await world.server.request('POST', '/realms', { token: narrowed.session.token, body: { name: 'staging' } });
    expect(realm.status, realm.text).toBe(201);
    await remember(narrowed, 'default', 'The zebra service deploys on Tuesdays.');
    await remember(narrowed, 'staging', 'The zebra staging copy deploys hourly.');
    const narrowedSent = systemOf((await run(kind, narrowed, 'when does zebra deploy?', [ANSWER])).requests[0]);
    expect(narrowedSent).toContain('The zebra staging copy deploys hourly.');
    expect(narrowedSent).not.toContain('Tuesdays');
  });

  it('an agent stored with options since removed from the catalog still loads and runs (the keys are ignored)', async () => {
    const org = await agentOrg('code_reviewer', null);
    const read = await world.server.request('GET', `/agents/agent-${counter}`, { token: org.session.token });
    expect(read.status).toBe(200);
    const { requests, status } = await run(kind, org, 'review', [ANSWER]);
    expect(status).toMatch(/^(succeeded|complete)$/);
    expect(systemOf(requests[0])).toContain('Review focus: tests.');
  });
});

describe('regression: an sre agent never writes to GitHub', () => {
  it('a task run of an sre agent calling github.create_comment is refused and nothing is posted', async () => {
    const org = await agentOrg('sre', {}, { sources: true });
    const before = { comments: github.comments.length, posts: github.requests.filter((request) => request.method !== 'GET').length };
    const { requests, status } = await run('task', org, 'nudge the stale pull request', [
      { tool_calls: [{ id: 'gh1', ...execute('github.create_comment', { repo: 'acme/api', issue_number: 7, body: 'ping' }) }] },
      ANSWER,
    ]);
    expect(status).toBe('succeeded');
    expect(toolResults(requests[1])[0]).toMatchObject({ error: { code: 'read_only', details: { tool: 'github.create_comment' } } });
    expect(github.comments.length).toBe(before.comments);
    expect(github.requests.filter((request) => request.method !== 'GET').length).toBe(before.posts);
  });
});

describe('the launch site keeps its own settings', () => {
  it("a task's or channel's system_prompt replaces the agent's; the type's option instructions are still appended", async () => {
    const org = await agentOrg('summarizer', { system_prompt: 'Agent prompt.', format: 'bullets' });
    const token = org.session.token;
    const channelId = (await world.server.request('GET', '/channels', { token })).body.items[0].id as string;
    expect((await world.server.request('PATCH', `/tasks/${org.taskId}`, { token, body: { system_prompt: 'Task prompt.' } })).status).toBe(200);
    expect((await world.server.request('PATCH', `/channels/${channelId}`, { token, body: { system_prompt: 'Channel prompt.' } })).status).toBe(200);
    for (const [kind, prompt] of [
      ['task', 'Task prompt.'],
      ['binding', 'Channel prompt.'],
      ['chat', 'Agent prompt.'],
    ] as const) {
      const sent = systemOf((await run(kind, org, 'summarize', [ANSWER])).requests[0]);
      expect(sent.startsWith(prompt), `${kind}: ${sent}`).toBe(true);
      expect(sent).toContain('Write the summary as a bulleted list, at most 200 words.');
    }
  });

  it('a read-only binding refuses writes with its own notice even for an agent that may write', async () => {
    const org = await agentOrg('sre', { read_only: false });
    const bindingId = (await world.server.request('GET', '/bindings', { token: org.session.token })).body.items[0].id as string;
    const patched = await world.server.request('PATCH', `/bindings/${bindingId}`, { token: org.session.token, body: { read_only: true } });
    expect(patched.status, patched.text).toBe(200);
    const { requests } = await run('binding', org, 'note this', storeTurns('w5'));
    const [result] = toolResults(requests[1]);
    expect(result).toMatchObject({ error: { code: 'read_only' } });
    expect(result.error.message).toContain('channel binding is read-only');
    expect(await memoryTexts(org)).toEqual([]);
  });
});
