import { beforeAll, describe, expect, it } from 'vitest';
import { useTwoOrgs } from '../helpers/suite.js';
import type { Session } from '../helpers/server.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

interface Memory {
  id: string;
  text: string;
  realm: string;
  kind: string;
  importance: number;
}
interface Recalled {
  memory: Memory;
  score: number;
}

describe('memory', () => {
  const ctx = useTwoOrgs();

  const create = (session: Session, body: Record<string, unknown>) => ctx.server.request('POST', '/memory', { token: session.token, body });
  const recall = (session: Session, body: Record<string, unknown>) => ctx.server.request('POST', '/memory/recall', { token: session.token, body });
  const texts = (items: Recalled[]) => items.map((item) => item.memory.text);

  it('creates with defaults, reads, updates and deletes an entry', async () => {
    const created = await create(ctx.alice, { text: 'The staging cluster runs in eu-west-1.' });
    expectStatus(created, 201).toMatchObject({
      kind: 'fact',
      realm: 'default',
      text: 'The staging cluster runs in eu-west-1.',
      title: null,
      tags: [],
      importance: 0.5,
      created_by: ctx.alice.user.id,
    });
    expect(created.body.id).toMatch(/^mem_/);
    const id = created.body.id as string;

    expect((await ctx.server.request('GET', `/memory/${id}`, { token: ctx.alice.token })).body.text).toBe('The staging cluster runs in eu-west-1.');

    const patched = await ctx.server.request('PATCH', `/memory/${id}`, {
      token: ctx.alice.token,
      body: { kind: 'guideline', title: 'Staging region', tags: ['infra'], importance: 0.9 },
    });
    expectStatus(patched, 200).toMatchObject({
      kind: 'guideline',
      title: 'Staging region',
      tags: ['infra'],
      importance: Math.fround(0.9),
      text: 'The staging cluster runs in eu-west-1.',
    });
    const cleared = await ctx.server.request('PATCH', `/memory/${id}`, { token: ctx.alice.token, body: { title: null } });
    expect(cleared.body.title).toBeNull();

    expect((await ctx.server.request('DELETE', `/memory/${id}`, { token: ctx.alice.token })).status).toBe(204);
    const gone = await ctx.server.request('GET', `/memory/${id}`, { token: ctx.alice.token });
    expectError(gone, 404, 'not_found');
  });

  it('stores importance as a 32-bit float', async () => {
    const created = await create(ctx.alice, { text: 'float check', importance: 0.1 });
    expect(created.body.importance).toBe(0.10000000149011612);
    const read = await ctx.server.request('GET', `/memory/${created.body.id}`, { token: ctx.alice.token });
    expect(read.body.importance).toBe(0.10000000149011612);
    const patched = await ctx.server.request('PATCH', `/memory/${created.body.id}`, { token: ctx.alice.token, body: { importance: 0.3 } });
    expect(patched.body.importance).toBe(0.30000001192092896);
    for (const importance of [0, 1]) {
      expect((await create(ctx.alice, { text: 'edge', importance })).body.importance).toBe(importance);
    }
  });

  it('validates kind, realm, text, tags and importance', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ text: '' }, 'text'],
      [{ text: 'x'.repeat(32 * 1024 + 1) }, 'text'],
      // the limit is in UTF-8 bytes
      [{ text: 'é'.repeat(16 * 1024 + 1) }, 'text'],
      [{ text: 'ok', kind: 'rumour' }, 'kind'],
      [{ text: 'ok', importance: 1.01 }, 'importance'],
      [{ text: 'ok', importance: -0.1 }, 'importance'],
      [{ text: 'ok', tags: Array.from({ length: 51 }, (_, index) => `t${index}`) }, 'tags'],
      [{ text: 'ok', realm: 'no-such-realm' }, 'realm'],
      [{ kind: 'fact' }, 'text'],
    ];
    for (const [body, path] of bad) {
      const response = await create(ctx.alice, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.issues[0].path).toBe(path);
    }
    expect((await create(ctx.alice, { text: 'x'.repeat(32 * 1024) })).status).toBe(201);

    const entry = await create(ctx.alice, { text: 'to move' });
    const badMove = await ctx.server.request('PATCH', `/memory/${entry.body.id}`, { token: ctx.alice.token, body: { realm: 'nowhere' } });
    expect(badMove.status).toBe(400);
    expect(badMove.body.error.details.issues[0].path).toBe('realm');
  });

  it("accepts only a realm of the caller's organization", async () => {
    expect((await ctx.server.request('POST', '/realms', { token: ctx.bob.token, body: { name: 'bob-only' } })).status).toBe(201);
    const foreign = await create(ctx.alice, { text: 'x', realm: 'bob-only' });
    expectError(foreign, 400, 'validation_error');
    const own = await create(ctx.bob, { text: 'in my realm', realm: 'bob-only' });
    expect(own.status).toBe(201);
    expect(own.body.realm).toBe('bob-only');
  });

  it('lists with realm and kind filters', async () => {
    const carol = await ctx.server.register('Carol Co');
    await ctx.server.request('POST', '/realms', { token: carol.token, body: { name: 'prod' } });
    await create(carol, { text: 'a', kind: 'fact' });
    await create(carol, { text: 'b', kind: 'guideline', realm: 'prod' });
    await create(carol, { text: 'c', kind: 'fact', realm: 'prod' });
    await create(carol, { text: 'd', kind: 'note' });

    const list = async (query: string) => {
      const response = await ctx.server.request('GET', `/memory${query}`, { token: carol.token });
      expect(response.status, query).toBe(200);
      return (response.body.items as Memory[]).map((item) => item.text);
    };
    expect(await list('')).toEqual(['a', 'b', 'c', 'd']);
    expect(await list('?realm=prod')).toEqual(['b', 'c']);
    expect(await list('?kind=fact')).toEqual(['a', 'c']);
    expect(await list('?realm=prod&kind=fact')).toEqual(['c']);
    const page = await ctx.server.request('GET', '/memory?limit=3', { token: carol.token });
    expect(page.body.total).toBe(4);
    const next = await ctx.server.request('GET', `/memory?limit=3&cursor=${page.body.next_cursor}`, { token: carol.token });
    expect((next.body.items as Memory[]).map((item) => item.text)).toEqual(['d']);

    for (const query of ['?kind=rumour', '?realm=nowhere']) {
      const bad = await ctx.server.request('GET', `/memory${query}`, { token: carol.token });
      expectError(bad, 400, 'validation_error');
    }
  });

  describe('recall', () => {
    let dana: Session;

    beforeAll(async () => {
      dana = await ctx.server.register('Dana Corp');
      await ctx.server.request('POST', '/realms', { token: dana.token, body: { name: 'ops' } });
      for (const body of [
        { text: 'We deployed the billing service on Friday.', importance: 0.5 },
        { text: 'Every deployment needs a change ticket.', kind: 'guideline', importance: 0.5 },
        { text: 'Deploys to production happen after 10:00 UTC.', kind: 'guideline', realm: 'ops', importance: 0.9 },
        { text: 'The database connection pool holds 20 connections.', importance: 0.5 },
        { text: 'Lunch is at noon.', kind: 'note', importance: 1 },
      ]) {
        expect((await create(dana, body)).status).toBe(201);
      }
    });

    it('matches by porter stem: "deploying" finds deployed and deploys, not deployment', async () => {
      // FTS5's porter stemmer maps deploying/deployed/deploys to "deploi" but deployment to "deploy"
      const response = await recall(dana, { query: 'deploying' });
      expect(response.status).toBe(200);
      expect(texts(response.body.items).sort()).toEqual(['Deploys to production happen after 10:00 UTC.', 'We deployed the billing service on Friday.']);
      const deployment = await recall(dana, { query: 'deployments' });
      expect(texts(deployment.body.items)).toEqual(['Every deployment needs a change ticket.']);
      const connecting = await recall(dana, { query: 'connecting' });
      expect(texts(connecting.body.items)).toEqual(['The database connection pool holds 20 connections.']);
    });

    it('ranks by text score times (0.5 + importance)', async () => {
      const response = await recall(dana, { query: 'deploying' });
      const [first, second] = response.body.items as Recalled[];
      // similar text relevance: the entry with importance 0.9 comes first
      expect(first?.memory.text).toBe('Deploys to production happen after 10:00 UTC.');
      expect(second?.memory.text).toBe('We deployed the billing service on Friday.');
      expect(first?.score).toBeGreaterThan(second?.score ?? Infinity);
      expect(second?.score).toBeGreaterThan(0);
      expect(first?.memory).toMatchObject({ kind: 'guideline', realm: 'ops', importance: Math.fround(0.9) });

      // the same text scores the same, so the score ratio is the importance factor: 1.5 / 0.5
      for (const importance of [0, 1]) await create(dana, { text: 'The kestrel runbook lives in the wiki.', importance });
      const twins = (await recall(dana, { query: 'kestrel' })).body.items as Recalled[];
      expect(twins.map((item) => item.memory.importance)).toEqual([1, 0]);
      expect((twins[0]?.score ?? 0) / (twins[1]?.score ?? 1)).toBeCloseTo(3, 10);
    });

    it('filters by realm and kind and honours limit', async () => {
      expect(texts((await recall(dana, { query: 'deploying', realm: 'ops' })).body.items)).toEqual(['Deploys to production happen after 10:00 UTC.']);
      expect(texts((await recall(dana, { query: 'deploying', realm: 'default' })).body.items)).toEqual(['We deployed the billing service on Friday.']);
      expect(texts((await recall(dana, { query: 'deploying', kind: 'fact' })).body.items)).toEqual(['We deployed the billing service on Friday.']);
      expect((await recall(dana, { query: 'deploying', limit: 1 })).body.items).toHaveLength(1);
      expect((await recall(dana, { query: 'kubernetes' })).body.items).toEqual([]);
      expect((await recall(dana, { query: '!!!' })).body.items).toEqual([]);
    });

    it('validates the recall request', async () => {
      const bad: [Record<string, unknown>, string][] = [
        [{ query: '' }, 'query'],
        [{ query: 'q'.repeat(1001) }, 'query'],
        [{ query: 'q', limit: 0 }, 'limit'],
        [{ query: 'q', limit: 51 }, 'limit'],
        [{ query: 'q', kind: 'rumour' }, 'kind'],
        [{ query: 'q', realm: 'nowhere' }, 'realm'],
        [{ limit: 5 }, 'query'],
      ];
      for (const [body, path] of bad) {
        const response = await recall(dana, body);
        expectError(response, 400, 'validation_error');
        expect(response.body.error.details.issues[0].path).toBe(path);
      }
      expect((await recall(dana, { query: 'q'.repeat(1000), limit: 50 })).status).toBe(200);
    });

    it("never returns another organization's memories", async () => {
      await create(ctx.bob, { text: 'Bob deployed the secret payroll service.', importance: 1 });
      const danas = await recall(dana, { query: 'deployed payroll secret', limit: 50 });
      expect(texts(danas.body.items)).not.toContain('Bob deployed the secret payroll service.');
      expect(texts((await recall(dana, { query: 'payroll' })).body.items)).toEqual([]);
      expect(texts((await recall(ctx.bob, { query: 'payroll' })).body.items)).toEqual(['Bob deployed the secret payroll service.']);
      expect(texts((await recall(ctx.bob, { query: 'billing' })).body.items)).toEqual([]);
    });
  });

  it("answers 404 for another organization's entry, on every verb", async () => {
    const created = await create(ctx.bob, { text: 'bob private fact' });
    const id = created.body.id as string;
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { importance: 1 }],
      ['DELETE', undefined],
    ] as const) {
      const response = await ctx.server.request(method, `/memory/${id}`, { token: ctx.alice.token, body });
      expectError(response, 404, 'not_found');
    }
    expect((await ctx.server.request('GET', `/memory/${id}`, { token: ctx.bob.token })).body.importance).toBe(0.5);
  });
});
