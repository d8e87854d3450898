/** /channels: provisioning fields, catalog, connect (tokens sealed, never returned), test action with scopes, reload, errors, isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/server.js';
import { addMember } from '../helpers/members.js';
import type { Session } from '../helpers/server.js';
import { startWorld, type ChannelWorld } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

let world: ChannelWorld;
let owner: Session;
let narrow: FakeSlack;

beforeAll(async () => {
  world = await startWorld();
  narrow = await startFakeSlack({ scopes: ['chat:write'] });
  owner = await world.server.register();
});
afterAll(async () => {
  await narrow.close();
  await world.close();
});

const create = (body: Record<string, unknown>, token = owner.token) => world.server.request('POST', '/channels', { token, body });

describe('/channels', () => {
  it('creates a channel with defaults and a server-derived instance_name', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Ops Team!' });
    expectStatus(created, 201).toMatchObject({
      channel_type: 'slack',
      display_name: 'Ops Team!',
      system_prompt: null,
      source_ids: [],
      response_mode: 'agent',
      is_active: true,
      filter_config: null,
      connection: null,
      events_url: `${new URL(world.server.url).origin}/api/v1/chat/incoming/slack/${created.body.id}`,
      interactivity_url: `${new URL(world.server.url).origin}/api/v1/chat/incoming/slack/${created.body.id}/interactivity`,
    });
    expect(created.body.instance_name).toMatch(/^slack-ops-team-[a-z0-9]{6}$/);
    const read = await world.server.request('GET', `/channels/${created.body.id}`, { token: owner.token });
    expect(read.body).toEqual(created.body);
    const list = await world.server.request('GET', '/channels', { token: owner.token });
    expect(list.body.items.map((item: { id: string }) => item.id)).toContain(created.body.id);
  });

  it('validates the body (unknown type, empty name, unknown field, unknown source)', async () => {
    for (const body of [
      { channel_type: 'carrier-pigeon', display_name: 'x' },
      { channel_type: 'slack', display_name: '' },
      { channel_type: 'slack', display_name: 'x', surprise: true },
      { channel_type: 'slack', display_name: 'x', response_mode: 'loud' },
      { channel_type: 'slack', display_name: 'x', source_ids: ['src_missing'] },
    ]) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
  });

  it('keeps channel_type immutable and changes the rest', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Mutable' });
    const immutable = await world.server.request('PATCH', `/channels/${created.body.id}`, { token: owner.token, body: { channel_type: 'teams' } });
    expect(immutable.status).toBe(400);
    expect(immutable.body.error).toMatchObject({ code: 'immutable_field', details: { field: 'channel_type' } });
    const patched = await world.server.request('PATCH', `/channels/${created.body.id}`, {
      token: owner.token,
      body: { display_name: 'Renamed', system_prompt: 'Be brief.', response_mode: 'disabled', filter_config: { rate_limits: { per_user_per_minute: 2 } } },
    });
    expectStatus(patched, 200).toMatchObject({
      display_name: 'Renamed',
      system_prompt: 'Be brief.',
      response_mode: 'disabled',
      instance_name: created.body.instance_name,
    });
  });

  it('lists channel types with the scopes their bots need', async () => {
    const catalog = await world.server.request('GET', '/channels/catalog', { token: owner.token });
    expect(catalog.status).toBe(200);
    expect(catalog.body.items[0]).toMatchObject({
      channel_type: 'slack',
      required_scopes: ['chat:write', 'channels:history'],
      optional_scopes: ['chat:write.public'],
      default_rate_limits: { per_channel_per_minute: 30, per_user_per_minute: 5 },
    });
  });

  it('connects with pasted tokens: checked with auth.test, sealed at rest, never returned', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Connected' });
    const connected = await world.server.request('POST', `/channels/${created.body.id}/connect`, {
      token: owner.token,
      body: { bot_token: world.slack.bot.token, signing_secret: world.slack.signingSecret, api_base_url: world.slack.apiUrl },
    });
    expect(connected.status).toBe(200);
    expect(connected.body.connection).toMatchObject({
      kind: 'tokens',
      status: 'connected',
      socket_mode: false,
      bot_user_id: world.slack.bot.user_id,
      team_id: world.slack.bot.team_id,
    });
    expect(connected.body.check).toMatchObject({ ok: true, details: { missing_optional_scopes: ['chat:write.public'] } });
    expect(connected.text).not.toContain(world.slack.bot.token);
    expect(connected.text).not.toContain(world.slack.signingSecret);
    const read = await world.server.request('GET', `/channels/${created.body.id}`, { token: owner.token });
    expect(read.text).not.toContain(world.slack.bot.token);
    const stored = await world.server.service.services.collections.channels.get(owner.organization.id as never, created.body.id);
    const sealed = JSON.stringify(stored);
    expect(sealed).not.toContain(world.slack.bot.token);
    expect(sealed).not.toContain(world.slack.signingSecret);

    const test = await world.server.request('POST', `/channels/${created.body.id}/test`, { token: owner.token });
    expectStatus(test, 200).toMatchObject({ ok: true, details: { granted_scopes: expect.arrayContaining(['chat:write', 'channels:history']) } });
    const reload = await world.server.request('POST', `/channels/${created.body.id}/reload`, { token: owner.token });
    expect(reload.body).toEqual({ reloaded: true, bindings: 0, socket_mode: false });
  });

  it('refuses a bad bot token at connect with 422 source_validation_failed', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Bad token' });
    const response = await world.server.request('POST', `/channels/${created.body.id}/connect`, {
      token: owner.token,
      body: { bot_token: 'xoxb-not-valid', signing_secret: 's', api_base_url: world.slack.apiUrl },
    });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({ code: 'source_validation_failed', details: { reason: 'invalid_auth' } });
    const bad = await world.server.request('POST', `/channels/${created.body.id}/connect`, {
      token: owner.token,
      body: { bot_token: 'x', signing_secret: 's', api_base_url: 'ftp://nope' },
    });
    expect(bad.status).toBe(400);
  });

  it('names the missing scopes in the test action (422)', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Narrow' });
    const connected = await world.server.request('POST', `/channels/${created.body.id}/connect`, {
      token: owner.token,
      body: { bot_token: narrow.bot.token, signing_secret: narrow.signingSecret, api_base_url: narrow.apiUrl },
    });
    expect(connected.status).toBe(200);
    expect(connected.body.check).toMatchObject({ ok: false, details: { missing_scopes: ['channels:history'] } });
    const test = await world.server.request('POST', `/channels/${created.body.id}/test`, { token: owner.token });
    expect(test.status).toBe(422);
    expect(test.body.error).toMatchObject({
      code: 'source_validation_failed',
      details: { missing_scopes: ['channels:history'], missing_optional_scopes: ['chat:write.public'] },
    });
    expect(test.body.error.message).toContain('channels:history');
  });

  it('answers 409 when testing a channel that is not connected', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Unconnected' });
    const test = await world.server.request('POST', `/channels/${created.body.id}/test`, { token: owner.token });
    expectError(test, 409, 'conflict');
  });

  it('deletes a channel with its bindings', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Short-lived' });
    const binding = await world.server.request('POST', '/bindings', {
      token: owner.token,
      body: { agent: 'default', match_rule: { channel: created.body.id } },
    });
    expect(binding.status).toBe(201);
    expect(world.server.service.services.supervisor.info(binding.body.id)?.state).toBe('active');
    const deleted = await world.server.request('DELETE', `/channels/${created.body.id}`, { token: owner.token });
    expect(deleted.status).toBe(204);
    expect((await world.server.request('GET', `/channels/${created.body.id}`, { token: owner.token })).status).toBe(404);
    expect((await world.server.request('GET', `/bindings/${binding.body.id}`, { token: owner.token })).status).toBe(404);
    expect(world.server.service.services.supervisor.info(binding.body.id)).toBeUndefined();
  });

  it('needs binding:manage to change channels (a viewer reads only)', async () => {
    const viewer = await addMember(world.server, owner, 'viewer');
    expect((await create({ channel_type: 'slack', display_name: 'Nope' }, viewer.token)).status).toBe(403);
    expect((await world.server.request('GET', '/channels', { token: viewer.token })).status).toBe(200);
  });

  it('documents the channel, binding and incoming routes in /openapi.json', async () => {
    const document = await world.server.request('GET', '/openapi.json');
    expect(document.status).toBe(200);
    const paths = Object.keys(document.body.paths as Record<string, unknown>);
    for (const path of [
      '/api/v1/channels',
      '/api/v1/channels/{id}/connect',
      '/api/v1/bindings/{id}',
      '/api/v1/chat/incoming/slack/{channel_id}/interactivity',
    ]) {
      expect(paths).toContain(path);
    }
  });

  it('isolates organizations: another org gets 404 on this channel', async () => {
    const created = await create({ channel_type: 'slack', display_name: 'Private' });
    const other = await world.server.register();
    for (const [method, path] of [
      ['GET', `/channels/${created.body.id}`],
      ['PATCH', `/channels/${created.body.id}`],
      ['POST', `/channels/${created.body.id}/test`],
      ['POST', `/channels/${created.body.id}/reload`],
      ['DELETE', `/channels/${created.body.id}`],
    ] as const) {
      const response = await world.server.request(method, path, { token: other.token, ...(method === 'PATCH' ? { body: { display_name: 'x' } } : {}) });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    const list = await world.server.request('GET', '/channels', { token: other.token });
    expect(list.body.total).toBe(0);
  });
});
