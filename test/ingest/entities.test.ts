import { describe, expect, it } from 'vitest';
import { FeedClient } from '../gateway/feed-client.js';
import { useTwoOrgs } from '../helpers/suite.js';
import type { Session } from '../helpers/server.js';
import { expectStatus } from '../helpers/expect-status.js';
import { createPipeline, ingest, ndjson, rowsOf } from './helpers.js';

describe('context_nodes pipelines feed the realm graph', () => {
  const ctx = useTwoOrgs();

  const node = (session: Session, id: string, realm = 'default') =>
    ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(id)}?realm=${realm}`, { token: session.token });

  it('upserts node rows by label and _key with typed properties, and relationship rows, in the same acknowledgement', async () => {
    const feed = await FeedClient.authenticated(ctx.server, ctx.alice.token);
    await feed.subscribe([{ kind: 'graph', realm: 'default' }]);
    const pipeline = await createPipeline(ctx.server, ctx.alice, { target_table: 'context_nodes' });
    const response = await ingest(
      ctx.server,
      pipeline.token,
      ndjson([
        { label: 'Service', _key: 'payments-api', name: 'Payments API', replicas: 3, ratio: 0.5, public: true, tags: ['pci'] },
        { label: 'Database', _key: 'pg-main', name: 'Main Postgres' },
        { type: 'READS_FROM', _from: 'Service:payments-api', _to: 'Database:pg-main', since: 2021 },
      ]),
    );
    expectStatus(response, 200).toMatchObject({
      rows_in: 3,
      rows_out: 3,
      graph: { status: 'done', nodes: 2, relationships: 1, rejected: 0, rejections: [] },
    });

    const service = await node(ctx.alice, 'Service:payments-api');
    expectStatus(service, 200).toMatchObject({
      label: 'Service',
      key: 'payments-api',
      properties: { _key: 'payments-api', name: 'Payments API', replicas: 3, ratio: 0.5, public: true, tags: '["pci"]' },
    });
    const expanded = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent('Service:payments-api')}/expand?realm=default&direction=out`, {
      token: ctx.alice.token,
    });
    expect(expanded.body.relationships).toEqual([expect.objectContaining({ type: 'READS_FROM', properties: { since: 2021 } })]);
    // the live feed (/ws) sees each node and relationship the batch wrote
    const events = await feed.eventsWhere(() => true, 3, 'the batch on the feed');
    feed.close();
    expect(events.map((event) => `${event.event} ${event.data.id ?? event.data.type}`)).toEqual([
      'node.upserted Service:payments-api',
      'node.upserted Database:pg-main',
      'relationship.upserted READS_FROM',
    ]);
    // the table keeps every row, relationships included
    expect(await rowsOf(ctx.server, ctx.alice, 'context_nodes')).toHaveLength(3);

    // a later batch updates the same node (upsert by key), properties it does not name keep their value
    const again = await ingest(ctx.server, pipeline.token, ndjson([{ label: 'Service', _key: 'payments-api', replicas: 5 }]));
    expectStatus(again, 200).toMatchObject({ graph: { nodes: 1, rejected: 0 } });
    expect((await node(ctx.alice, 'Service:payments-api')).body.properties).toMatchObject({ replicas: 5, name: 'Payments API' });

    // the other organization sees none of it
    expect((await node(ctx.bob, 'Service:payments-api')).status).toBe(404);
  });

  it('keys rows by the pipeline key_field when they carry no _key', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice, { target_table: 'context_nodes', key_field: 'email' });
    const response = await ingest(ctx.server, pipeline.token, ndjson([{ label: 'Person', email: 'ada@example.test', name: 'Ada' }]));
    expectStatus(response, 200).toMatchObject({ graph: { nodes: 1, rejected: 0 } });
    expectStatus(await node(ctx.alice, 'Person:ada@example.test'), 200).toMatchObject({ properties: { email: 'ada@example.test', name: 'Ada' } });
    const pipelines = await ctx.server.request('GET', `/context/pipelines/${pipeline.pipelineId}`, { token: ctx.alice.token });
    expect(pipelines.body.key_field).toBe('email');
    const bad = await ctx.server.request('POST', '/context/pipelines', {
      token: ctx.alice.token,
      body: { name: 'bad key', target_table: 'context_nodes', key_field: 'not a name' },
    });
    expect(bad.status).toBe(400);
  });

  it('refuses rows the graph cannot hold: the table keeps them, the answer and the run name line and reason', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice, { target_table: 'context_nodes' });
    await ingest(ctx.server, pipeline.token, ndjson([{ label: 'Host', _key: 'h0', cores: 8 }]));
    const response = await ingest(
      ctx.server,
      pipeline.token,
      ndjson([
        { label: 'Host', _key: 'h1', cores: 4 },
        { label: 'not a label', _key: 'x' },
        { label: 'Host', cores: 2 },
        { label: 'Host', _key: 'h2', cores: 'many' },
        { type: 'RUNS_ON', _from: 'Host:h1' },
        { label: 'Host', _key: 'h3', cores: 16 },
      ]),
    );
    const body = expectStatus(response, 200);
    body.toMatchObject({ rows_in: 6, rows_out: 6, graph: { nodes: 2, relationships: 0, rejected: 4 } });
    const reasons = (response.body.graph.rejections as { line: number; reason: string }[]).map((item) => item.line);
    expect(reasons).toEqual([2, 3, 4, 5]);
    expect(response.body.graph.rejections[1].reason).toMatch(/no key/);
    expect(response.body.graph.rejections[2].reason).toMatch(/INT64/);
    expect((await node(ctx.alice, 'Host:h3')).body.properties.cores).toBe(16);
    expect((await node(ctx.alice, 'Host:h2')).status).toBe(404);

    const runs = await ctx.server.request('GET', `/context/pipelines/${pipeline.pipelineId}/runs`, { token: ctx.alice.token });
    expect(runs.body.items[0]).toMatchObject({ run_id: response.body.run_id, graph: { status: 'done', nodes: 2, rejected: 4 } });
  });

  it('answers an Idempotency-Key retry with the same graph outcome and writes nothing twice', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice, { target_table: 'context_nodes', realm: 'default' });
    const body = ndjson([{ label: 'Team', _key: 'core', size: 4 }]);
    const first = await ingest(ctx.server, pipeline.token, body, { 'idempotency-key': 'team-1' });
    const retry = await ingest(ctx.server, pipeline.token, body, { 'idempotency-key': 'team-1' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
  });

  it('leaves context_events pipelines out of the graph', async () => {
    const pipeline = await createPipeline(ctx.server, ctx.alice, { target_table: 'context_events' });
    const response = await ingest(ctx.server, pipeline.token, ndjson([{ label: 'Event', _key: 'e1' }]));
    expect(response.body.graph).toBeUndefined();
    expect((await node(ctx.alice, 'Event:e1')).status).toBe(404);
  });
});
