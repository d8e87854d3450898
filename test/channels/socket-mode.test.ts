/**
 * Socket Mode: a channel connected with an app token holds a WebSocket to
 * (the fake) Slack through @slack/socket-mode; events arrive as envelopes,
 * are acknowledged, and are answered like Events API requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { askInThread, connectChannel, startWorld, type ChannelWorld, useWorld } from './helpers.js';
import { expectStatus } from '../helpers/expect-status.js';

const ctx = useWorld();

describe('Socket Mode', () => {
  it('receives a mention over the socket, acknowledges both envelopes and answers once in the thread', async () => {
    const connected = await connectChannel(ctx.world, { connect: { app_token: ctx.world.slack.appToken } });
    const channel = await ctx.world.server.request('GET', `/channels/${connected.channelId}`, { token: connected.session.token });
    expect(channel.body.connection).toMatchObject({ kind: 'tokens', socket_mode: true, status: 'connected' });
    await ctx.world.slack.whenSocketConnected();
    const open = ctx.world.slack.calls.find((call) => call.method === 'apps.connections.open');
    expect(open?.token).toBe(ctx.world.slack.appToken);
    const actors = await ctx.world.server.request('GET', '/runtime/actors', { token: connected.session.token });
    expect(JSON.stringify(actors.body)).toContain(`sock_${connected.channelId}`);

    ctx.world.llm.script([{ text: 'Answered over the socket.' }]);
    ctx.world.slack.eventsUrl = null;
    const { deliveries } = await askInThread(ctx.world, 'are you there?', 'Answered over the socket.', { via: 'socket' });
    expect(ctx.world.slack.acks).toEqual(expect.arrayContaining(deliveries.map((delivery) => delivery.body)));
    expect(ctx.world.llm.requests).toHaveLength(1);
  });

  it('reload reconnects the socket', async () => {
    const connected = await connectChannel(ctx.world, { connect: { app_token: ctx.world.slack.appToken } });
    const opens = ctx.world.slack.calls.filter((call) => call.method === 'apps.connections.open').length;
    const reload = await ctx.world.server.request('POST', `/channels/${connected.channelId}/reload`, { token: connected.session.token });
    expectStatus(reload, 200).toEqual({ reloaded: true, bindings: 1, socket_mode: true });
    await ctx.world.slack.waitForCall(
      'apps.connections.open',
      () => ctx.world.slack.calls.filter((call) => call.method === 'apps.connections.open').length > opens,
    );
  });
});

describe('Socket Mode through the egress guard', () => {
  let guarded: ChannelWorld;

  beforeAll(async () => {
    // only the fake's API address is open: the WebSocket URL the API answers is the tenant's choice too
    guarded = await startWorld({ env: { EGRESS_ALLOW: '127.0.0.1' } });
  });
  afterAll(async () => {
    await guarded.close();
  });

  it('refuses a socket URL on an address the guard does not open, before connecting', async () => {
    guarded.slack.socketHost = '127.0.0.2';
    const connected = await connectChannel(guarded, { connect: { app_token: guarded.slack.appToken } });
    await guarded.slack.waitForCall('apps.connections.open');
    const socketId = `sock_${connected.channelId}`;
    // the actor's own record of why it failed (the listing shows only its state)
    const failure = await eventually(
      async () => {
        const socket = guarded.server.service.services.channels.socketState(connected.channelId);
        return socket?.state === 'failed' ? (socket.failure ?? '') : undefined;
      },
      { what: 'the socket actor to fail' },
    );
    // the guard's refusal, before any connection (not the refused connection of an unguarded dial)
    expect(failure).toContain('outbound call to 127.0.0.2 refused');
    expect(failure).toContain('loopback');
    expect(failure).not.toContain('ECONNREFUSED');
    const actors = await guarded.server.request('GET', '/runtime/actors', { token: connected.session.token });
    expect((actors.body.items as { id: string; state: string }[]).find((actor) => actor.id === socketId)?.state).toBe('failed');
  });
});
