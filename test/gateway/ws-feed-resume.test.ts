/**
 * The WebSocket feed at /ws (README "Live feeds"), continued: task run events
 * of a manual run, resuming after a reconnect within the retention window,
 * `resync_required` beyond it, and a slow consumer closed with 4008.
 */
import { describe, expect, it } from 'vitest';
import { startWiredOrg } from '../helpers/llm.js';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { runEnds, createTask } from '../tasks/helpers.js';
import { FeedClient } from './feed-client.js';

const RETAINED = 30;
const ctx = useSuite(async (own) =>
  ownLlm(own, await startWiredOrg({ WS_FEED_RETAIN_EVENTS: String(RETAINED), WS_FEED_MAX_BUFFERED_BYTES: String(64 * 1024) })),
);

const writeNodes = async (keys: string[], label = 'Doc', properties: Record<string, unknown> = {}): Promise<void> => {
  const nodes = keys.map((key) => ({ label, properties: { _key: key, ...properties } }));
  const written = await ctx.server.request('POST', '/graph/nodes', { token: ctx.owner.token, body: { nodes } });
  expect(written.status).toBe(200);
};

describe('the feed: task runs', () => {
  it('announces a manual run: created, started, ended; a task_id topic sees only its task', async () => {
    const task = await createTask(ctx.server, ctx.owner, { name: 'feed task', trigger: { kind: 'webhook' }, input: { instruction: 'say done' } });
    const other = await createTask(ctx.server, ctx.owner, { name: 'other task', trigger: { kind: 'webhook' }, input: { instruction: 'say done' } });
    const all = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    const one = await FeedClient.authenticated(ctx.server, ctx.owner.token, 'frame');
    await all.subscribe([{ kind: 'task_runs', task_id: '*' }]);
    await one.subscribe([{ kind: 'task_runs', task_id: task.id }]);

    ctx.llm.script([{ text: 'done' }, { text: 'done' }]);
    const fire = await ctx.server.request('POST', `/tasks/${task.id}/run`, { token: ctx.owner.token });
    expect(fire.status).toBe(202);
    await runEnds(ctx.server, ctx.owner, task.id, fire.body.run_id);
    const otherFire = await ctx.server.request('POST', `/tasks/${other.id}/run`, { token: ctx.owner.token });
    await runEnds(ctx.server, ctx.owner, other.id, otherFire.body.run_id);

    const ofRun = (runId: string) => (event: any) => event.data.run_id === runId;
    const events = await one.eventsWhere(ofRun(fire.body.run_id), 3, 'the run to be created, started and ended');
    expect(events.map((event) => event.event)).toEqual(['task_run.created', 'task_run.started', 'task_run.ended']);
    expect(events[0]).toMatchObject({ topic: 'task_runs', data: { task_id: task.id, status: 'pending', origin: 'manual' } });
    expect(events[2].data).toMatchObject({ status: 'succeeded', finished_at: expect.any(String) });
    await all.eventsWhere(ofRun(otherFire.body.run_id), 3, "the other task's run on the * topic");
    expect(one.events().every((event) => event.data.task_id === task.id)).toBe(true);
    all.close();
    one.close();
  });
});

describe('the feed: resuming', () => {
  it('replays the retained events after after_seq on a new connection, then goes on live', async () => {
    const first = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    const { stream } = await first.subscribe([{ kind: 'graph', labels: ['Doc'] }]);
    await writeNodes(['r1']);
    const [seen] = await first.eventsWhere((event) => event.data.key === 'r1', 1, 'r1');
    first.close();
    await first.waitClosed();

    await writeNodes(['r2', 'r3']);
    await writeNodes(['skip'], 'Other');
    const second = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    const subscribed = await second.subscribe([{ kind: 'graph', labels: ['Doc'] }], { after_seq: seen.seq, stream });
    expect(subscribed).toMatchObject({ type: 'subscribed', stream, replayed: 2 });
    await writeNodes(['r4']);
    const events = await second.eventsWhere(() => true, 3, 'the replay and the live event');
    expect(events.map((event) => event.data.key)).toEqual(['r2', 'r3', 'r4']);
    expect(events[0].seq).toBeGreaterThan(seen.seq);
    second.close();
  });

  it('answers resync_required for a seq older than the window, from another stream, or never issued; live events follow', async () => {
    const first = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    const { stream } = await first.subscribe([{ kind: 'graph' }]);
    await writeNodes(['old']);
    const [seen] = await first.eventsWhere((event) => event.data.key === 'old', 1, 'old');
    first.close();
    await writeNodes(Array.from({ length: RETAINED + 5 }, (_, index) => `flood-${index}`));

    const late = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    const answer = await late.subscribe([{ kind: 'graph' }], { after_seq: seen.seq, stream });
    const resync = late.frames.find((frame) => frame.type === 'resync_required');
    expect(resync).toMatchObject({ after_seq: seen.seq, stream });
    expect(resync.oldest_seq).toBeGreaterThan(seen.seq + 1);
    expect(answer).toMatchObject({ type: 'subscribed', replayed: 0 });
    await writeNodes(['after-resync']);
    await late.eventsWhere((event) => event.data.key === 'after-resync', 1, 'a live event after the resync');
    expect(late.events()).toHaveLength(1);

    const otherStream = await late.subscribe([{ kind: 'graph' }], { after_seq: seen.seq, stream: 'from-before-a-restart' });
    expect(otherStream.type).toBe('subscribed');
    expect(late.frames.filter((frame) => frame.type === 'resync_required').at(-1)).toMatchObject({ oldest_seq: null });
    const future = await late.subscribe([{ kind: 'graph' }], { after_seq: answer.seq + 1000 });
    expect(future.type).toBe('subscribed');
    expect(late.frames.filter((frame) => frame.type === 'resync_required')).toHaveLength(3);
    late.close();
  });
});

describe('the feed: backpressure', () => {
  it('closes a consumer that stops reading with 4008 instead of buffering without bound', async () => {
    const slow = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    await slow.subscribe([{ kind: 'graph', labels: ['Bulk'] }]);
    const fast = await FeedClient.authenticated(ctx.server, ctx.owner.token);
    await fast.subscribe([{ kind: 'graph', labels: ['Bulk'] }]);
    (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

    const text = 'x'.repeat(25_000);
    const batches = 16;
    for (let batch = 0; batch < batches; batch += 1) {
      await writeNodes(
        Array.from({ length: 40 }, (_, index) => `bulk-${batch}-${index}`),
        'Bulk',
        { text },
      );
    }
    // the reader that keeps up gets everything
    await fast.eventsWhere(() => true, batches * 40, 'every event on the fast connection');
    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    expect((await slow.waitClosed(30_000)).code).toBe(4008);
    expect(slow.events().length).toBeLessThan(batches * 40);
    expect(fast.closed).toBeNull();
    fast.close();
  }, 120_000);
});
