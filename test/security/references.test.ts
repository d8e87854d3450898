/**
 * References are checked on save (runtime/references.ts): every id or name a
 * task, binding, channel or source points at must be the caller's
 * organization's, on create and on update. Another organization's id and an
 * id that never existed get the same 400, naming the failing field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type Session, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/expect-status.js';

let server: TestServer;
let alice: Session;
let bob: Session;

/** what an organization owns that others may point at */
interface Owned {
  agentId: string;
  agentName: string;
  realm: string;
  sourceId: string;
  channelId: string;
}
let mine: Owned;
let theirs: Owned;

async function created(response: Promise<ApiResponse>): Promise<Record<string, any>> {
  const answer = await response;
  if (answer.status !== 201) throw new Error(`setup: ${answer.status} ${answer.text}`);
  return answer.body;
}

async function own(session: Session, tag: string): Promise<Owned> {
  const post = (path: string, body: unknown) => created(server.request('POST', path, { token: session.token, body }));
  const agent = await post('/agents', { agent_type: 'assistant', name: `${tag}-agent` });
  const realm = await post('/realms', { name: `${tag}-realm` });
  const source = await post('/sources', { name: `${tag} github`, connector: 'github', config: { auth: { kind: 'pat', token: 'ghp_x' } } });
  const channel = await post('/channels', { channel_type: 'slack', display_name: `${tag} channel` });
  return { agentId: agent.id, agentName: agent.name, realm: realm.name, sourceId: source.id, channelId: channel.id };
}

beforeAll(async () => {
  server = await startTestServer();
  alice = await server.register('Alice Refs');
  bob = await server.register('Bob Refs');
  mine = await own(alice, 'alice');
  theirs = await own(bob, 'bob');
});
afterAll(async () => {
  await server?.stop();
});

const MISSING = {
  agentId: 'agt_doesnotexist000',
  agentName: 'nobody-agent',
  realm: 'no-such-realm',
  sourceId: 'src_doesnotexist000',
  channelId: 'chn_doesnotexist000',
};

/** the refusal with the offending value blanked: the same text whether the value is foreign or missing */
function refusal(response: ApiResponse, path: string, value: string): { code: string; message: string; issues: unknown } {
  expectError(response, 400, 'validation_error');
  const issues = response.body.error.details.issues as { path: string; message: string }[];
  expect(issues.map((issue) => issue.path)).toEqual([path]);
  const blank = (text: string) => text.split(value).join('<ref>');
  return { code: response.body.error.code, message: blank(response.body.error.message), issues: JSON.parse(blank(JSON.stringify(issues))) };
}

/** POST then PATCH with `bad` (foreign, then missing): both refused alike, naming `path` */
async function expectRefusedBoth(send: (bad: string) => Promise<ApiResponse>, path: string, foreign: string, missing: string): Promise<void> {
  const a = refusal(await send(foreign), path, foreign);
  const b = refusal(await send(missing), path, missing);
  expect(a).toEqual(b);
  expect(JSON.stringify(a)).not.toContain('another organization');
}

const taskBody = (extra: Record<string, unknown>) => ({
  name: `task ${Math.random()}`,
  trigger: { kind: 'schedule', cron: '0 6 * * *' },
  enabled: false,
  ...extra,
});

describe('tasks: agent, realm, enabled_source_ids', () => {
  const post = (extra: Record<string, unknown>) => server.request('POST', '/tasks', { token: alice.token, body: taskBody(extra) });
  let taskId: string;
  beforeAll(async () => {
    taskId = (await created(post({}))).id as string;
  });
  const patch = (extra: Record<string, unknown>) => server.request('PATCH', `/tasks/${taskId}`, { token: alice.token, body: extra });

  for (const [verb, send] of [
    ['create', post],
    ['update', patch],
  ] as const) {
    it(`${verb}: an agent id or name of another organization, or none, is refused naming agent`, async () => {
      await expectRefusedBoth((bad) => send({ agent: bad }), 'agent', theirs.agentId, MISSING.agentId);
      await expectRefusedBoth((bad) => send({ agent: bad }), 'agent', theirs.agentName, MISSING.agentName);
    });

    it(`${verb}: a realm of another organization, or none, is refused naming realm`, async () => {
      await expectRefusedBoth((bad) => send({ realm: bad }), 'realm', theirs.realm, MISSING.realm);
    });

    it(`${verb}: a source of another organization, or none, is refused naming its index`, async () => {
      await expectRefusedBoth((bad) => send({ enabled_source_ids: [mine.sourceId, bad] }), 'enabled_source_ids.1', theirs.sourceId, MISSING.sourceId);
      await expectRefusedBoth((bad) => send({ enabled_source_ids: [bad] }), 'enabled_source_ids.0', theirs.sourceId, MISSING.sourceId);
    });
  }

  it('every failing reference is named at once', async () => {
    const response = await post({ agent: theirs.agentId, realm: theirs.realm, enabled_source_ids: [theirs.sourceId, mine.sourceId, MISSING.sourceId] });
    expect(response.status).toBe(400);
    expect(response.body.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual([
      'agent',
      'realm',
      'enabled_source_ids.0',
      'enabled_source_ids.2',
    ]);
  });

  it("the organization's own agent (by id or name), realm and sources are accepted on create and update; null keeps the defaults", async () => {
    const made = await post({ agent: mine.agentId, realm: mine.realm, enabled_source_ids: [mine.sourceId] });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ agent: mine.agentId, realm: mine.realm, enabled_source_ids: [mine.sourceId] });
    const changed = await patch({ agent: mine.agentName, realm: 'default', enabled_source_ids: [] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ agent: mine.agentName, realm: 'default', enabled_source_ids: [] });
    const cleared = await patch({ agent: null, realm: null, enabled_source_ids: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ agent: null, realm: null, enabled_source_ids: null });
  });

  it('a refused update changes nothing', async () => {
    await patch({ agent: mine.agentId });
    expect((await patch({ agent: theirs.agentId, name: 'renamed' })).status).toBe(400);
    const read = await server.request('GET', `/tasks/${taskId}`, { token: alice.token });
    expect(read.body.agent).toBe(mine.agentId);
    expect(read.body.name).not.toBe('renamed');
  });
});

describe('bindings: agent, match_rule.channel', () => {
  const post = (agent: string, channel: string) =>
    server.request('POST', '/bindings', { token: alice.token, body: { agent, match_rule: { channel }, enabled: false } });
  let bindingId: string;
  beforeAll(async () => {
    bindingId = (await created(post(mine.agentName, mine.channelId))).id as string;
  });
  const patch = (body: Record<string, unknown>) => server.request('PATCH', `/bindings/${bindingId}`, { token: alice.token, body });

  it('create: an agent of another organization, or none, is refused naming agent', async () => {
    await expectRefusedBoth((bad) => post(bad, mine.channelId), 'agent', theirs.agentId, MISSING.agentId);
    await expectRefusedBoth((bad) => post(bad, mine.channelId), 'agent', theirs.agentName, MISSING.agentName);
  });

  it('create: a channel of another organization, or none, is refused naming match_rule.channel', async () => {
    await expectRefusedBoth((bad) => post(mine.agentId, bad), 'match_rule.channel', theirs.channelId, MISSING.channelId);
  });

  it('update: the same refusals for agent and match_rule.channel', async () => {
    await expectRefusedBoth((bad) => patch({ agent: bad }), 'agent', theirs.agentId, MISSING.agentId);
    await expectRefusedBoth((bad) => patch({ match_rule: { channel: bad } }), 'match_rule.channel', theirs.channelId, MISSING.channelId);
  });

  it("the organization's own agent and channel are accepted on create and update", async () => {
    const made = await post(mine.agentId, mine.channelId);
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ agent_id: mine.agentId, match_rule: { channel: mine.channelId } });
    const other = await created(server.request('POST', '/channels', { token: alice.token, body: { channel_type: 'slack', display_name: 'second' } }));
    const changed = await patch({ agent: 'default', match_rule: { channel: other.id } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.match_rule.channel).toBe(other.id);
    expect(changed.body.agent).toBe('default');
  });
});

describe('channels: source_ids', () => {
  const post = (ids: string[]) =>
    server.request('POST', '/channels', { token: alice.token, body: { channel_type: 'slack', display_name: `c ${Math.random()}`, source_ids: ids } });
  let channelId: string;
  beforeAll(async () => {
    channelId = (await created(post([]))).id as string;
  });
  const patch = (ids: string[]) => server.request('PATCH', `/channels/${channelId}`, { token: alice.token, body: { source_ids: ids } });

  it('create and update: a source of another organization, or none, is refused naming its index', async () => {
    await expectRefusedBoth((bad) => post([bad]), 'source_ids.0', theirs.sourceId, MISSING.sourceId);
    await expectRefusedBoth((bad) => post([mine.sourceId, bad]), 'source_ids.1', theirs.sourceId, MISSING.sourceId);
    await expectRefusedBoth((bad) => patch([bad]), 'source_ids.0', theirs.sourceId, MISSING.sourceId);
    await expectRefusedBoth((bad) => patch([mine.sourceId, bad]), 'source_ids.1', theirs.sourceId, MISSING.sourceId);
  });

  it("the organization's own sources are accepted on create and update", async () => {
    const made = await post([mine.sourceId]);
    expect(made.status, made.text).toBe(201);
    expect(made.body.source_ids).toEqual([mine.sourceId]);
    const changed = await patch([mine.sourceId]);
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.source_ids).toEqual([mine.sourceId]);
  });
});

describe('sources: realm', () => {
  const post = (realm: string) =>
    server.request('POST', '/sources', {
      token: alice.token,
      body: { name: `s ${Math.random()}`, connector: 'github', realm, config: { auth: { kind: 'pat', token: 't' } } },
    });

  it('create and update: a realm of another organization, or none, is refused naming realm', async () => {
    await expectRefusedBoth(post, 'realm', theirs.realm, MISSING.realm);
    await expectRefusedBoth(
      (bad) => server.request('PATCH', `/sources/${mine.sourceId}`, { token: alice.token, body: { realm: bad } }),
      'realm',
      theirs.realm,
      MISSING.realm,
    );
  });

  it("the organization's own realm is accepted", async () => {
    const made = await post(mine.realm);
    expect(made.status, made.text).toBe(201);
    expect(made.body.realm).toBe(mine.realm);
  });
});

describe('chat conversations: agent', () => {
  const post = (agent?: string) =>
    server.request('POST', '/chat/conversations', { token: alice.token, body: { title: 'refs', ...(agent === undefined ? {} : { agent }) } });

  it('an agent of another organization, or none, is refused naming agent', async () => {
    await expectRefusedBoth(post, 'agent', theirs.agentId, MISSING.agentId);
    await expectRefusedBoth(post, 'agent', theirs.agentName, MISSING.agentName);
  });

  it("the organization's own agent (id or name) is accepted; without one, the default agent answers", async () => {
    for (const ref of [mine.agentId, mine.agentName]) {
      const made = await post(ref);
      expect(made.status, made.text).toBe(201);
      expect(made.body.agent_id).toBe(mine.agentId);
    }
    const fallback = await post();
    expect(fallback.status).toBe(201);
    expect(fallback.body.agent_id).toMatch(/^agt_/);
    expect(fallback.body.agent_id).not.toBe(mine.agentId);
  });
});
