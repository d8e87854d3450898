/** /bindings: match rules, each binding an actor under the supervisor, validation, isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../helpers/server.js';
import { startWorld, type ChannelWorld } from '../channels/helpers.js';
import { expectStatus } from '../helpers/expect-status.js';

let world: ChannelWorld;
let owner: Session;
let channelId: string;

beforeAll(async () => {
  world = await startWorld();
  owner = await world.server.register();
  const channel = await world.server.request('POST', '/channels', { token: owner.token, body: { channel_type: 'slack', display_name: 'Bindings' } });
  channelId = channel.body.id;
});
afterAll(async () => {
  await world.close();
});

const actorOf = (id: string) => world.server.service.services.supervisor.info(id);

describe('/bindings', () => {
  it('creates a binding with defaults; its actor runs under the supervisor', async () => {
    const created = await world.server.request('POST', '/bindings', {
      token: owner.token,
      body: { agent: 'default', match_rule: { channel: channelId, slack_channel: '#Ops'.toLowerCase() } },
    });
    expectStatus(created, 201).toMatchObject({
      agent: 'default',
      match_rule: { channel: channelId, slack_channel: 'ops', mentioned: true, preserve_thread: true },
      read_only: false,
      approval_write: 'ask',
      allow_bots: false,
      enabled: true,
      created_by: owner.user.id,
    });
    expect(created.body.agent_id).toMatch(/^agt_/);
    expect(actorOf(created.body.id)).toMatchObject({ kind: 'channel_binding', state: 'active', org_id: owner.organization.id });
    const read = await world.server.request('GET', `/bindings/${created.body.id}`, { token: owner.token });
    expect(read.body).toMatchObject({ ...created.body, actor_state: 'active' });
    const actors = await world.server.request('GET', '/runtime/actors', { token: owner.token });
    expect(JSON.stringify(actors.body)).toContain(created.body.id);
  });

  it('pauses the actor when disabled, resumes it when enabled, stops it when deleted', async () => {
    const created = await world.server.request('POST', '/bindings', {
      token: owner.token,
      body: { agent: 'default', match_rule: { channel: channelId, mentioned: false, preserve_thread: false }, read_only: true },
    });
    const id = created.body.id as string;
    const disabled = await world.server.request('PATCH', `/bindings/${id}`, { token: owner.token, body: { enabled: false, match_rule: { mentioned: true } } });
    expectStatus(disabled, 200).toMatchObject({ enabled: false, read_only: true, match_rule: { channel: channelId, mentioned: true, preserve_thread: false } });
    expect(actorOf(id)?.state).toBe('paused');
    await world.server.request('PATCH', `/bindings/${id}`, { token: owner.token, body: { enabled: true } });
    expect(actorOf(id)?.state).toBe('active');
    const deleted = await world.server.request('DELETE', `/bindings/${id}`, { token: owner.token });
    expect(deleted.status).toBe(204);
    expect(actorOf(id)).toBeUndefined();
    expect((await world.server.request('GET', `/bindings/${id}`, { token: owner.token })).status).toBe(404);
  });

  it('lists bindings, filtered by channel', async () => {
    const other = await world.server.request('POST', '/channels', { token: owner.token, body: { channel_type: 'slack', display_name: 'Other' } });
    await world.server.request('POST', '/bindings', { token: owner.token, body: { agent: 'default', match_rule: { channel: other.body.id } } });
    const all = await world.server.request('GET', '/bindings', { token: owner.token });
    const filtered = await world.server.request('GET', `/bindings?channel=${other.body.id}`, { token: owner.token });
    expect(filtered.body.total).toBe(1);
    expect(all.body.total).toBeGreaterThan(filtered.body.total);
    expect(filtered.body.items[0].match_rule.channel).toBe(other.body.id);
  });

  it('validates the agent, the channel and the rule', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ agent: 'nobody', match_rule: { channel: channelId } }, 'agent'],
      [{ agent: 'default', match_rule: { channel: 'chn_missing' } }, 'match_rule.channel'],
      [{ agent: 'default', match_rule: { channel: channelId, slack_channel: 'Has Spaces' } }, 'match_rule.slack_channel'],
      [{ agent: 'default', match_rule: { channel: channelId, mentioned: 'yes' } }, 'match_rule.mentioned'],
      [{ agent: 'default' }, 'match_rule'],
      [{ agent: 'default', match_rule: { channel: channelId }, approval_write: 'sometimes' }, 'approval_write'],
    ];
    for (const [body, path] of cases) {
      const response = await world.server.request('POST', '/bindings', { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(JSON.stringify(response.body.error.details)).toContain(path.split('.').at(-1));
    }
  });

  it('isolates organizations: another org gets 404 and cannot bind to this channel', async () => {
    const created = await world.server.request('POST', '/bindings', { token: owner.token, body: { agent: 'default', match_rule: { channel: channelId } } });
    const other = await world.server.register();
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const response = await world.server.request(method, `/bindings/${created.body.id}`, {
        token: other.token,
        ...(method === 'PATCH' ? { body: { enabled: false } } : {}),
      });
      expect(response.status, method).toBe(404);
    }
    const foreign = await world.server.request('POST', '/bindings', { token: other.token, body: { agent: 'default', match_rule: { channel: channelId } } });
    expect(foreign.status).toBe(400);
    expect((await world.server.request('GET', '/bindings', { token: other.token })).body.total).toBe(0);
    expect(actorOf(created.body.id)?.state).toBe('active');
  });

  it('starts the actors of stored bindings when the service starts again', async () => {
    const { server } = world;
    const before = server.service.services.supervisor.list({ kind: 'channel_binding' }).map((actor) => actor.id);
    expect(before.length).toBeGreaterThan(0);
    const { startTestServer } = await import('../helpers/server.js');
    const restarted = await startTestServer({}, { dataDir: server.dataDir });
    try {
      const after = restarted.service.services.supervisor.list({ kind: 'channel_binding' }).map((actor) => actor.id);
      expect(after.sort()).toEqual(before.sort());
    } finally {
      await restarted.stop();
    }
  });
});
