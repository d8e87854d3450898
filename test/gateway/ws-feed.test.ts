/**
 * The WebSocket feed at /ws (README "Live feeds") with the `ws` client against
 * the real server: authentication both ways, organizations apart, graph
 * changes from every write path, the label filter, permissions and bad frames.
 */
import { describe, expect, it } from 'vitest';
import { apiKeyWith } from '../helpers/members.js';
import { useTwoOrgs } from '../helpers/suite.js';
import { pause } from '../helpers/eventually.js';
import { FeedClient } from './feed-client.js';

const ctx = useTwoOrgs({ WS_AUTH_TIMEOUT_MS: '300' });

const upsertNodes = async (token: string, nodes: unknown[], realm = 'default'): Promise<void> => {
  const written = await ctx.server.request('POST', '/graph/nodes', { token, body: { realm, nodes } });
  expect(written.status).toBe(200);
};

describe('the feed: authentication', () => {
  it('takes a login token in Sec-WebSocket-Protocol (echoing "bearer") and an API key in the first frame, at /ws and /api/v1/ws', async () => {
    const viaHeader = await FeedClient.authenticated(ctx.server, ctx.alice.token, 'header');
    expect(viaHeader.socket.protocol).toBe('bearer');
    expect(viaHeader.frames[0]).toMatchObject({ type: 'authenticated', organization_id: ctx.alice.organization.id, seq: expect.any(Number) });
    expect(typeof viaHeader.frames[0].stream).toBe('string');
    viaHeader.close();

    const key = await apiKeyWith(ctx.server, ctx.alice.token, ['graph:read']);
    const viaFrame = await FeedClient.connect(ctx.server, { path: '/api/v1/ws' });
    viaFrame.send({ type: 'auth', token: key });
    await viaFrame.next((frame) => frame.type === 'authenticated', 'authenticated by API key');
    expect(viaFrame.frames[0].organization_id).toBe(ctx.alice.organization.id);
    viaFrame.send({ type: 'ping' });
    await viaFrame.next((frame) => frame.type === 'pong', 'pong');
    // a second auth frame is refused, the connection stays
    viaFrame.send({ type: 'auth', token: key });
    expect((await viaFrame.next((frame) => frame.type === 'error', 'error')).code).toBe('conflict');
    viaFrame.close();
  });

  it('closes with 4401 on a refused credential (either way), a non-auth first frame, or no auth frame within WS_AUTH_TIMEOUT_MS', async () => {
    const badHeader = await FeedClient.connect(ctx.server, { token: 'not-a-valid-token' });
    expect((await badHeader.waitClosed()).code).toBe(4401);

    const badFrame = await FeedClient.connect(ctx.server);
    badFrame.send({ type: 'auth', token: 'sk_live_nope' });
    expect((await badFrame.waitClosed()).code).toBe(4401);

    const subscribeFirst = await FeedClient.connect(ctx.server);
    subscribeFirst.send({ type: 'subscribe', topics: [{ kind: 'graph' }] });
    expect((await subscribeFirst.waitClosed()).code).toBe(4401);

    const silent = await FeedClient.connect(ctx.server);
    expect((await silent.waitClosed()).code).toBe(4401);
    expect(silent.frames).toEqual([]);
  });
});

describe('the feed: graph changes', () => {
  it('announces node and relationship upserts, deletes and Cypher writes, numbered in order', async () => {
    const client = await FeedClient.authenticated(ctx.server, ctx.alice.token);
    const subscribed = await client.subscribe([{ kind: 'graph', realm: 'default' }]);
    expect(subscribed).toMatchObject({ type: 'subscribed', topics: [{ kind: 'graph', realm: 'default' }], replayed: 0 });

    await upsertNodes(ctx.alice.token, [
      { label: 'Service', properties: { _key: 'payments', tier: 1 } },
      { label: 'Team', properties: { _key: 'core' } },
    ]);
    const rel = await ctx.server.request('POST', '/graph/relationships', {
      token: ctx.alice.token,
      body: { relationships: [{ type: 'OWNS', from_label: 'Team', from_key: 'core', to_label: 'Service', to_key: 'payments' }] },
    });
    expect(rel.status).toBe(200);
    const cypher = await ctx.server.request('POST', '/graph/cypher', {
      token: ctx.alice.token,
      body: { query: "MATCH (s:Service {_key: 'payments'}) SET s.tier = 2 RETURN s._key AS key" },
    });
    expect(cypher.status).toBe(200);
    // a read is not a change
    const read = await ctx.server.request('POST', '/graph/cypher', { token: ctx.alice.token, body: { query: 'MATCH (s:Service) RETURN count(s) AS n' } });
    expect(read.status).toBe(200);
    const deleted = await ctx.server.request('DELETE', '/graph/nodes/Team:core', { token: ctx.alice.token });
    expect(deleted.status).toBe(200);

    const events = await client.eventsWhere(() => true, 5, 'five graph events');
    expect(events.map((event) => event.event)).toEqual(['node.upserted', 'node.upserted', 'relationship.upserted', 'cypher.write', 'node.deleted']);
    expect(events[0]).toMatchObject({
      topic: 'graph',
      data: { realm: 'default', id: 'Service:payments', label: 'Service', key: 'payments', properties: { _key: 'payments', tier: 1 } },
    });
    expect(events[2].data).toMatchObject({ type: 'OWNS', from: 'Team:core', to: 'Service:payments' });
    expect(events[4].data).toMatchObject({ id: 'Team:core', relationships_deleted: 1 });
    const seqs = events.map((event) => event.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    await pause(100);
    expect(client.events()).toHaveLength(5);
    client.close();
  });

  it('filters by labels: a relationship matches by either end, a Cypher write (labels unknown) always', async () => {
    const client = await FeedClient.authenticated(ctx.server, ctx.alice.token);
    await client.subscribe([{ kind: 'graph', labels: ['Team'] }]);
    await upsertNodes(ctx.alice.token, [
      { label: 'Service', properties: { _key: 'search' } },
      { label: 'Team', properties: { _key: 'platform' } },
    ]);
    await ctx.server.request('POST', '/graph/relationships', {
      token: ctx.alice.token,
      body: { relationships: [{ type: 'OWNS', from_label: 'Team', from_key: 'platform', to_label: 'Service', to_key: 'search' }] },
    });
    await upsertNodes(ctx.alice.token, [{ label: 'Service', properties: { _key: 'last' } }]);
    await ctx.server.request('POST', '/graph/cypher', { token: ctx.alice.token, body: { query: "CREATE (:Service {_key: 'made-by-cypher'})" } });
    const events = await client.eventsWhere((event) => event.event === 'cypher.write', 1, 'the cypher write');
    await pause(50);
    expect(client.events().map((event) => `${event.event} ${event.data.id ?? event.data.from ?? ''}`)).toEqual([
      'node.upserted Team:platform',
      'relationship.upserted Team:platform',
      'cypher.write ',
    ]);
    expect(events).toHaveLength(1);
    client.close();
  });

  it("never shows one organization another's changes, nor its tasks or realms", async () => {
    const alice = await FeedClient.authenticated(ctx.server, ctx.alice.token);
    const bob = await FeedClient.authenticated(ctx.server, ctx.bob.token);
    await alice.subscribe([{ kind: 'graph' }, { kind: 'task_runs', task_id: '*' }]);
    await bob.subscribe([{ kind: 'graph' }]);
    await upsertNodes(ctx.bob.token, [{ label: 'Secret', properties: { _key: 'bob-only' } }]);
    await upsertNodes(ctx.alice.token, [{ label: 'Note', properties: { _key: 'alice-only' } }]);
    await alice.eventsWhere((event) => event.data.key === 'alice-only', 1, "alice's own change");
    await bob.eventsWhere((event) => event.data.key === 'bob-only', 1, "bob's own change");
    await pause(50);
    expect(alice.events().every((event) => event.data.key !== 'bob-only')).toBe(true);
    expect(bob.events().map((event) => event.data.key)).toEqual(['bob-only']);

    const task = await ctx.server.request('POST', '/tasks', { token: ctx.alice.token, body: { name: 'alice task', trigger: { kind: 'webhook' } } });
    expect(task.status).toBe(201);
    const foreignTask = await bob.subscribe([{ kind: 'task_runs', task_id: task.body.id }]);
    expect(foreignTask).toMatchObject({ type: 'error', code: 'not_found' });
    const realm = await ctx.server.request('POST', '/realms', { token: ctx.alice.token, body: { name: 'alice-realm' } });
    expect(realm.status).toBe(201);
    const foreignRealm = await bob.subscribe([{ kind: 'graph', realm: 'alice-realm' }]);
    expect(foreignRealm).toMatchObject({ type: 'error', code: 'not_found' });
    alice.close();
    bob.close();
  });
});

describe('the feed: permissions and bad frames', () => {
  it('needs graph:read for graph topics and task:read for task runs', async () => {
    const taskReader = await apiKeyWith(ctx.server, ctx.alice.token, ['task:read']);
    const client = await FeedClient.authenticated(ctx.server, taskReader, 'frame');
    expect(await client.subscribe([{ kind: 'graph' }])).toMatchObject({ type: 'error', code: 'forbidden', details: { permission: 'graph:read' } });
    expect(await client.subscribe([{ kind: 'task_runs' }])).toMatchObject({ type: 'subscribed', topics: [{ kind: 'task_runs', task_id: '*' }] });
    client.close();
  });

  it('answers malformed frames with an error frame and keeps the connection; closes on a frame over 64 KiB', async () => {
    const client = await FeedClient.authenticated(ctx.server, ctx.alice.token);
    const errorAfter = async (frame: unknown): Promise<any> => {
      const from = client.frames.length;
      client.send(frame);
      return client.next((answer) => answer.type === 'error', 'an error frame', from);
    };
    expect((await errorAfter('{not json')).code).toBe('invalid_json');
    expect((await errorAfter({ type: 'launch' })).code).toBe('validation_error');
    expect((await errorAfter({ type: 'subscribe', topics: [{ kind: 'graph', labels: [] }] })).code).toBe('validation_error');
    expect((await errorAfter({ type: 'subscribe', topics: [], after_seq: -1 })).code).toBe('validation_error');
    expect((await errorAfter('[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]')).code).toBe('payload_too_deep');
    expect((await errorAfter(Buffer.from([1, 2, 3]))).code).toBe('validation_error');
    expect(client.closed).toBeNull();
    client.send({ type: 'subscribe', topics: [], padding: 'x'.repeat(70_000) });
    const closed = await client.waitClosed();
    // uWS cuts the connection (no close frame): the client sees 1006
    expect(closed.code).toBe(1006);
  });
});
