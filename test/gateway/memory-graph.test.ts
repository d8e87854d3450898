import { describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import type { Session } from '../helpers/server.js';
import { addMember } from '../helpers/members.js';
import { expectStatus } from '../helpers/expect-status.js';

describe('memory graph sync', () => {
  const ctx = useTwoOrgs();

  const sync = (session: Session, body: Record<string, unknown> = {}) => ctx.server.request('POST', '/memory/sync', { token: session.token, body });
  const remember = async (session: Session, text: string, title?: string): Promise<string> => {
    const created = await ctx.server.request('POST', '/memory', { token: session.token, body: { text, ...(title ? { title } : {}) } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const node = (session: Session, id: string) => ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(id)}?realm=default`, { token: session.token });
  const linksOf = async (session: Session, memoryId: string): Promise<string[]> => {
    const expanded = await ctx.server.request('GET', `/graph/nodes/${encodeURIComponent(`Memory:${memoryId}`)}/expand?realm=default&direction=out`, {
      token: session.token,
    });
    expect(expanded.status).toBe(200);
    return (expanded.body.nodes as { id: string }[])
      .map((item) => item.id)
      .filter((id) => id !== `Memory:${memoryId}`)
      .sort();
  };

  it('links memories to the entities they name, idempotently, and follows edits and deletes', async () => {
    const nodes = await ctx.server.request('POST', '/graph/nodes', {
      token: ctx.alice.token,
      body: {
        realm: 'default',
        nodes: [
          { label: 'Service', properties: { _key: 'payments-api', name: 'Payments API' } },
          { label: 'Database', properties: { _key: 'pg-main', name: 'Main Postgres' } },
          { label: 'Team', properties: { _key: 'sre', name: 'Site Reliability' } },
        ],
      },
    });
    expect(nodes.status).toBe(200);
    const reads = await remember(ctx.alice, 'payments-api reads from pg-main every minute.');
    const owns = await remember(ctx.alice, 'The payments api team owns the billing pipeline.', 'Ownership');
    const none = await remember(ctx.alice, 'Nothing named here: pg-mainframe and xpayments-api are other things.');

    const first = await sync(ctx.alice);
    expectStatus(first, 200).toEqual({ realm: 'default', memories: 3, nodes_upserted: 3, nodes_deleted: 0, links_added: 3, links_removed: 0 });
    expect(await linksOf(ctx.alice, reads)).toEqual(['Database:pg-main', 'Service:payments-api']);
    expect(await linksOf(ctx.alice, owns)).toEqual(['Service:payments-api']);
    expect(await linksOf(ctx.alice, none)).toEqual([]);
    expectStatus(await node(ctx.alice, `Memory:${owns}`), 200).toMatchObject({ properties: { title: 'Ownership', kind: 'fact' } });

    // a second sync changes nothing
    expectStatus(await sync(ctx.alice), 200).toEqual({ realm: 'default', memories: 3, nodes_upserted: 0, nodes_deleted: 0, links_added: 0, links_removed: 0 });

    // recall expands along the links
    const recalled = await ctx.server.request('POST', '/memory/recall', { token: ctx.alice.token, body: { query: 'minute', expand: true } });
    expect(recalled.status).toBe(200);
    expect(recalled.body.items[0].memory.id).toBe(reads);
    expect((recalled.body.items[0].entities as { id: string }[]).map((entity) => entity.id).sort()).toEqual(['Database:pg-main', 'Service:payments-api']);
    const plain = await ctx.server.request('POST', '/memory/recall', { token: ctx.alice.token, body: { query: 'minute' } });
    expect(plain.body.items[0].entities).toBeUndefined();

    // an edit moves the links, a delete removes the node and its links, a new entity is linked at the next sync
    expect(
      (await ctx.server.request('PATCH', `/memory/${reads}`, { token: ctx.alice.token, body: { text: 'pg-main is backed up by Site Reliability.' } })).status,
    ).toBe(200);
    expect((await ctx.server.request('DELETE', `/memory/${owns}`, { token: ctx.alice.token })).status).toBe(204);
    const changed = await sync(ctx.alice);
    expectStatus(changed, 200).toEqual({ realm: 'default', memories: 2, nodes_upserted: 1, nodes_deleted: 1, links_added: 1, links_removed: 1 });
    expect(await linksOf(ctx.alice, reads)).toEqual(['Database:pg-main', 'Team:sre']);
    expect((await node(ctx.alice, `Memory:${owns}`)).status).toBe(404);
    expect((await node(ctx.alice, `Memory:${reads}`)).body.properties.text).toBe('pg-main is backed up by Site Reliability.');
  });

  it('keeps organizations apart and needs memory:manage', async () => {
    const mine = await remember(ctx.bob, 'payments-api is ours too.');
    expectStatus(await sync(ctx.bob), 200).toMatchObject({ memories: 1, nodes_upserted: 1, links_added: 0 });
    expect((await node(ctx.alice, `Memory:${mine}`)).status).toBe(404);
    const recalled = await ctx.server.request('POST', '/memory/recall', { token: ctx.bob.token, body: { query: 'payments', expand: true } });
    expect(recalled.body.items).toEqual([expect.objectContaining({ entities: [] })]);

    const viewer = await addMember(ctx.server, ctx.alice, 'viewer');
    expect((await sync(viewer)).status).toBe(403);
    expect((await sync(ctx.alice, { realm: 'nowhere' })).status).toBe(400);
  });
});
