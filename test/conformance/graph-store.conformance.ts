/**
 * The graph store contract, run against every reachable implementation
 * (Kùzu always; Bolt when GRAPH_URL is set).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../runtime/errors.js';
import type { GraphScope, GraphStore } from '../../runtime/graph/store.js';

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error.code;
    throw error;
  }
  throw new Error('expected the call to fail');
}

export interface ConformanceOptions {
  /** whether the store runs user Cypher (the Bolt adapter does not yet) */
  readonly rawCypher: boolean;
  /** opens the same stored graph again, as a restarted server does; absent: the restart cases are skipped */
  readonly reopen?: () => Promise<GraphStore>;
}

export function graphStoreConformance(name: string, open: () => Promise<GraphStore>, options: ConformanceOptions = { rawCypher: true }): void {
  describe(`graph store conformance: ${name}`, () => {
    let store: GraphStore;
    const org = `org_${randomUUID().slice(0, 8)}`;
    const scope: GraphScope = { orgId: org, realm: 'default' };

    beforeAll(async () => {
      store = await open();
      await store.upsertNodes(scope, [
        { label: 'Service', properties: { _key: 'payments', name: 'Payments API', tier: 1, owner: 'team-pay' } },
        { label: 'Service', properties: { _key: 'checkout', name: 'Checkout web', tier: 2 } },
        { label: 'Service', properties: { _key: 'ledger', name: 'Ledger', tier: 1 } },
        { label: 'Team', properties: { _key: 'team-pay', name: 'Payments team' } },
      ]);
      await store.upsertRelationships(scope, [
        { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'checkout', to_label: 'Service', to_key: 'payments', properties: { critical: true } },
        { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'payments', to_label: 'Service', to_key: 'ledger' },
        { type: 'OWNED_BY', from_label: 'Service', from_key: 'payments', to_label: 'Team', to_key: 'team-pay' },
      ]);
    });
    afterAll(async () => {
      await store.close();
    });

    it('gets a node with its properties, and null for an absent one', async () => {
      const node = await store.getNode(scope, 'Service', 'payments');
      expect(node).toEqual({
        id: 'Service:payments',
        label: 'Service',
        key: 'payments',
        properties: { _key: 'payments', name: 'Payments API', tier: 1, owner: 'team-pay' },
      });
      expect(await store.getNode(scope, 'Service', 'nope')).toBeNull();
      expect(await store.getNode(scope, 'NeverSeen', 'x')).toBeNull();
    });

    it('upserts by key: given properties change, others keep their value, new ones are added', async () => {
      const count = await store.upsertNodes(scope, [
        { label: 'Service', properties: { _key: 'checkout', tier: 3, language: 'go' } },
        { label: 'Service', properties: { _key: 'checkout', language: 'rust' } },
      ]);
      expect(count).toBe(1);
      const node = await store.getNode(scope, 'Service', 'checkout');
      expect(node?.properties).toEqual({ _key: 'checkout', name: 'Checkout web', tier: 3, language: 'rust' });
    });

    it('stores an integer in a float property, and refuses a string in an integer one', async () => {
      await store.upsertNodes(scope, [{ label: 'Metric', properties: { _key: 'm1', value: 1.5 } }]);
      await store.upsertNodes(scope, [{ label: 'Metric', properties: { _key: 'm2', value: 2 } }]);
      expect((await store.getNode(scope, 'Metric', 'm1'))?.properties['value']).toBe(1.5);
      expect((await store.getNode(scope, 'Metric', 'm2'))?.properties['value']).toBe(2);
      expect(await errorCode(store.upsertNodes(scope, [{ label: 'Service', properties: { _key: 'bad', tier: 'high' } }]))).toBe('validation_error');
      expect(await store.getNode(scope, 'Service', 'bad')).toBeNull();
    });

    it('refuses labels and property names that are not identifiers', async () => {
      expect(await errorCode(store.upsertNodes(scope, [{ label: 'Bad Label', properties: { _key: 'x' } }]))).toBe('validation_error');
      expect(await errorCode(store.upsertNodes(scope, [{ label: 'Ok', properties: { _key: 'x', 'a-b': 1 } }]))).toBe('validation_error');
      expect(
        await errorCode(
          store.upsertRelationships(scope, [{ type: 'X`) DETACH DELETE n //', from_label: 'Service', from_key: 'a', to_label: 'Service', to_key: 'b' }]),
        ),
      ).toBe('validation_error');
    });

    it('creates missing end nodes with only their key, and upserts a relationship once per (type, from, to)', async () => {
      await store.upsertRelationships(scope, [
        { type: 'DEPLOYED_TO', from_label: 'Service', from_key: 'payments', to_label: 'Cluster', to_key: 'prod-eu', properties: { replicas: 2 } },
      ]);
      await store.upsertRelationships(scope, [
        { type: 'DEPLOYED_TO', from_label: 'Service', from_key: 'payments', to_label: 'Cluster', to_key: 'prod-eu', properties: { replicas: 3 } },
      ]);
      expect((await store.getNode(scope, 'Cluster', 'prod-eu'))?.properties).toEqual({ _key: 'prod-eu' });
      const around = await store.expand(scope, 'Cluster', 'prod-eu', { depth: 1, direction: 'in', limit: 50 });
      expect(around?.relationships).toEqual([{ type: 'DEPLOYED_TO', from: 'Service:payments', to: 'Cluster:prod-eu', properties: { replicas: 3 } }]);
    });

    it('creates an end node shared by two relationship types of one batch once, and updates a stored edge among new ones', async () => {
      const batch: GraphScope = { orgId: org, realm: 'batch-ends' };
      await store.upsertRelationships(batch, [
        { type: 'RUNS_ON', from_label: 'Service', from_key: 'api', to_label: 'Host', to_key: 'h1', properties: { since: 1 } },
      ]);
      await store.upsertRelationships(batch, [
        { type: 'RUNS_ON', from_label: 'Service', from_key: 'api', to_label: 'Host', to_key: 'h1', properties: { since: 2 } },
        { type: 'RUNS_ON', from_label: 'Service', from_key: 'api', to_label: 'Host', to_key: 'h2', properties: { since: 3 } },
        { type: 'BACKED_UP_TO', from_label: 'Service', from_key: 'db', to_label: 'Host', to_key: 'h3' },
        { type: 'RUNS_ON', from_label: 'Service', from_key: 'db', to_label: 'Host', to_key: 'h3' },
      ]);
      expect(await store.stats(batch, true)).toMatchObject({
        node_count: 5,
        relationship_count: 4,
        labels: { Service: 2, Host: 3 },
        relationship_types: { RUNS_ON: 3, BACKED_UP_TO: 1 },
      });
      const api = await store.expand(batch, 'Service', 'api', { depth: 1, direction: 'out', limit: 50 });
      expect(api?.relationships.map((rel) => [rel.to, rel.properties['since']]).sort()).toEqual([
        ['Host:h1', 2],
        ['Host:h2', 3],
      ]);
    });

    it('stores awkward text exactly: quotes, commas, line breaks, empty strings, the text NULL, JSON, unicode', async () => {
      const texts: GraphScope = { orgId: org, realm: 'texts' };
      const awkward = ['say "hi", then go', 'line one\nline two\r\nthree', '', 'NULL', 'null', ' NULL ', 'tab\there \\ backslash', 'ünïcødé 🎉'];
      // the first batch holds the text NULL (sent the slow way), the second does not (bulk path)
      await store.upsertNodes(
        texts,
        awkward.map((text, at) => ({ label: 'Note', properties: { _key: `n${at}`, text, flag: at % 2 === 0 } })),
      );
      await store.upsertNodes(texts, [
        { label: 'Note', properties: { _key: 'k,with "quotes"\nand a break', text: '', data: { nested: ['a', 1] }, flag: null } },
        { label: 'Note', properties: { _key: 'plain', text: 'a "quoted", comma' } },
      ]);
      for (const [at, text] of awkward.entries()) {
        expect((await store.getNode(texts, 'Note', `n${at}`))?.properties).toEqual({ _key: `n${at}`, text, flag: at % 2 === 0 });
      }
      // without the text NULL: the bulk path, for text and keys alike
      const bulk = awkward
        .filter((text) => text !== 'NULL')
        .concat(["'single quoted'", "it's", ' lead', 'trail ', '\\N', '#hash', 'a;b', '"all quoted"', '007', 'true', '\\', ',']);
      await store.upsertNodes(
        texts,
        bulk.map((text, at) => ({ label: 'Note', properties: { _key: `bulk ${text}`, text, at } })),
      );
      for (const [at, text] of bulk.entries()) {
        expect((await store.getNode(texts, 'Note', `bulk ${text}`))?.properties).toEqual({ _key: `bulk ${text}`, text, at });
      }
      // a batch with no double quote at all: nothing else may be taken for a quote or a separator
      const plain = ["'one'", "'two;three'", "'x'", 'plain'];
      await store.upsertNodes(
        texts,
        plain.map((text, at) => ({ label: 'Quip', properties: { _key: `q${at}`, text, at } })),
      );
      for (const [at, text] of plain.entries()) expect((await store.getNode(texts, 'Quip', `q${at}`))?.properties).toEqual({ _key: `q${at}`, text, at });
      expect((await store.getNode(texts, 'Note', 'k,with "quotes"\nand a break'))?.properties).toEqual({
        _key: 'k,with "quotes"\nand a break',
        text: '',
        data: JSON.stringify({ nested: ['a', 1] }),
      });
      await store.upsertRelationships(texts, [
        {
          type: 'LINKS',
          from_label: 'Note',
          from_key: 'plain',
          to_label: 'Note',
          to_key: 'k,with "quotes"\nand a break',
          properties: { why: 'a, "b"\nc', ok: true },
        },
        { type: 'LINKS', from_label: 'Note', from_key: 'n0', to_label: 'Note', to_key: 'n1', properties: { why: '' } },
      ]);
      const out = await store.expand(texts, 'Note', 'plain', { depth: 1, direction: 'out', limit: 10 });
      expect(out?.relationships).toEqual([
        { type: 'LINKS', from: 'Note:plain', to: 'Note:k,with "quotes"\nand a break', properties: { why: 'a, "b"\nc', ok: true } },
      ]);
      const blank = await store.expand(texts, 'Note', 'n0', { depth: 1, direction: 'out', limit: 10 });
      expect(blank?.relationships.map((rel) => rel.properties)).toEqual([{ why: '' }]);
      // a NUL character (which a CSV reader cannot take) in a key, a property and a relationship property
      await store.upsertNodes(texts, [{ label: 'Note', properties: { _key: 'nul\u0000key', text: 'a\u0000b' } }]);
      await store.upsertRelationships(texts, [
        { type: 'LINKS', from_label: 'Note', from_key: 'nul\u0000key', to_label: 'Note', to_key: 'plain', properties: { why: '\u0000' } },
      ]);
      expect((await store.getNode(texts, 'Note', 'nul\u0000key'))?.properties).toEqual({ _key: 'nul\u0000key', text: 'a\u0000b' });
      const nul = await store.expand(texts, 'Note', 'nul\u0000key', { depth: 1, direction: 'out', limit: 10 });
      expect(nul?.relationships.map((rel) => rel.properties)).toEqual([{ why: '\u0000' }]);
    });

    it('writes nodes and the relationships between them issued together, each once', async () => {
      const burst: GraphScope = { orgId: org, realm: 'burst' };
      const services = (from: number) =>
        Array.from({ length: 40 }, (_, at) => ({ label: 'Svc', properties: { _key: `s${from + at}`, name: `service ${from + at}` } }));
      const links = (from: number) =>
        Array.from({ length: 40 }, (_, at) => ({
          type: 'CALLS',
          from_label: 'Svc',
          from_key: `s${from + at}`,
          to_label: 'Svc',
          to_key: `s${(from + at + 1) % 100}`,
          properties: { weight: at },
        }));
      // nodes, then relationships among them (and to nodes not written yet), then the rest of the nodes, all at once
      const results = await Promise.all([
        store.upsertNodes(burst, services(0)),
        store.upsertRelationships(burst, links(0)),
        store.upsertRelationships(burst, links(40)),
        store.upsertNodes(burst, services(40)),
        store.upsertRelationships(burst, links(0)),
      ]);
      expect(results).toEqual([40, 40, 40, 40, 40]);
      // s80 was created as an end node by the second relationship batch; the node batch after it gave it its name
      expect(await store.stats(burst, true)).toMatchObject({ node_count: 81, relationship_count: 80, labels: { Svc: 81 } });
      expect((await store.getNode(burst, 'Svc', 's80'))?.properties).toEqual({ _key: 's80' });
      expect((await store.getNode(burst, 'Svc', 's41'))?.properties).toEqual({ _key: 's41', name: 'service 41' });
      expect((await store.getNode(burst, 'Svc', 's1'))?.properties).toEqual({ _key: 's1', name: 'service 1' });
    });

    it('keeps concurrent batches all or nothing each: a bad one fails alone, later batches win on shared keys', async () => {
      const busy: GraphScope = { orgId: org, realm: 'concurrent' };
      await store.upsertNodes(busy, [{ label: 'Job', properties: { _key: 'seed', attempts: 1 } }]);
      const batch = (from: number, attempts: number | string) =>
        Array.from({ length: 50 }, (_, at) => ({ label: 'Job', properties: { _key: `job-${from + at}`, attempts } }));
      // issued together: an engine may write the waiting batches in one transaction
      const results = await Promise.allSettled([
        store.upsertNodes(busy, batch(0, 2)),
        store.upsertNodes(busy, batch(100, 'many')),
        store.upsertNodes(busy, batch(25, 3)),
      ]);
      expect(results[0]).toEqual({ status: 'fulfilled', value: 50 });
      expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'validation_error' } });
      expect(results[2]).toEqual({ status: 'fulfilled', value: 50 });
      expect(await store.stats(busy, true)).toMatchObject({ node_count: 76, labels: { Job: 76 } });
      expect((await store.getNode(busy, 'Job', 'job-10'))?.properties['attempts']).toBe(2);
      expect((await store.getNode(busy, 'Job', 'job-30'))?.properties['attempts']).toBe(3);
      expect(await store.getNode(busy, 'Job', 'job-100')).toBeNull();
    });

    it('expands by depth, direction and type', async () => {
      const out = await store.expand(scope, 'Service', 'checkout', { depth: 1, direction: 'out', limit: 50 });
      expect(out?.nodes.map((node) => node.id).sort()).toEqual(['Service:checkout', 'Service:payments']);
      const two = await store.expand(scope, 'Service', 'checkout', { depth: 2, direction: 'out', types: ['DEPENDS_ON'], limit: 50 });
      expect(two?.nodes.map((node) => node.id).sort()).toEqual(['Service:checkout', 'Service:ledger', 'Service:payments']);
      expect(two?.relationships).toContainEqual({ type: 'DEPENDS_ON', from: 'Service:checkout', to: 'Service:payments', properties: { critical: true } });
      const dependents = await store.expand(scope, 'Service', 'payments', { depth: 1, direction: 'in', types: ['DEPENDS_ON'], limit: 50 });
      expect(dependents?.nodes.map((node) => node.id).sort()).toEqual(['Service:checkout', 'Service:payments']);
      const capped = await store.expand(scope, 'Service', 'payments', { depth: 2, direction: 'both', limit: 2 });
      expect(capped?.nodes).toHaveLength(2);
      expect(await store.expand(scope, 'Service', 'nope', { depth: 1, direction: 'both', limit: 5 })).toBeNull();
    });

    it('searches the string properties, best match first, with a label filter', async () => {
      const result = await store.search(scope, { query: 'payments', limit: 10 });
      expect(result.items[0]?.id).toMatch(/^(Service:payments|Team:team-pay)$/);
      expect(result.items.map((item) => item.id)).toEqual(expect.arrayContaining(['Service:payments', 'Team:team-pay']));
      expect(result.total).toBeGreaterThanOrEqual(2);
      expect(result.items.every((item) => item.score > 0)).toBe(true);
      const teams = await store.search(scope, { query: 'payments', limit: 10, labels: ['Team'] });
      expect(teams.items.map((item) => item.id)).toEqual(['Team:team-pay']);
      expect((await store.search(scope, { query: 'zzzunknownword', limit: 10 })).total).toBe(0);
    });

    it('finds properties added after the first search', async () => {
      await store.search(scope, { query: 'ledger', limit: 5 });
      await store.upsertNodes(scope, [{ label: 'Service', properties: { _key: 'ledger', summary: 'double-entry bookkeeping' } }]);
      const result = await store.search(scope, { query: 'bookkeeping', limit: 5 });
      expect(result.items.map((item) => item.id)).toEqual(['Service:ledger']);
    });

    it('counts nodes and relationships, per label on request', async () => {
      const stats = await store.stats(scope, true);
      expect(stats.labels?.['Service']).toBe(3);
      expect(stats.labels?.['Team']).toBe(1);
      expect(stats.relationship_types?.['DEPENDS_ON']).toBe(2);
      expect(stats.node_count).toBe(Object.values(stats.labels ?? {}).reduce((sum, count) => sum + count, 0));
      const plain = await store.stats(scope, false);
      expect(plain.labels).toBeUndefined();
      expect(plain.relationship_count).toBe(stats.relationship_count);
    });

    it('keeps realms and organizations apart', async () => {
      const otherRealm: GraphScope = { orgId: org, realm: 'staging' };
      const otherOrg: GraphScope = { orgId: `${org}x`, realm: 'default' };
      for (const other of [otherRealm, otherOrg]) {
        expect(await store.getNode(other, 'Service', 'payments')).toBeNull();
        expect((await store.search(other, { query: 'payments', limit: 5 })).total).toBe(0);
        expect((await store.stats(other, false)).node_count).toBe(0);
      }
      await store.upsertNodes(otherRealm, [{ label: 'Service', properties: { _key: 'payments', name: 'staging copy' } }]);
      expect((await store.getNode(scope, 'Service', 'payments'))?.properties['name']).toBe('Payments API');
      if (options.rawCypher) {
        const rows = await store.cypher(otherRealm, 'MATCH (n) RETURN count(n) AS c', {}, { allowWrite: false });
        expect(rows.rows).toEqual([{ c: 1 }]);
      }
    });

    it('deletes a node with its relationships', async () => {
      await store.upsertRelationships(scope, [
        { type: 'DEPENDS_ON', from_label: 'Service', from_key: 'doomed', to_label: 'Service', to_key: 'payments' },
        { type: 'OWNED_BY', from_label: 'Service', from_key: 'doomed', to_label: 'Team', to_key: 'team-pay' },
      ]);
      expect(await store.deleteNode(scope, 'Service', 'doomed')).toEqual({ relationshipsDeleted: 2 });
      expect(await store.getNode(scope, 'Service', 'doomed')).toBeNull();
      expect(await store.deleteNode(scope, 'Service', 'doomed')).toBeNull();
      const around = await store.expand(scope, 'Team', 'team-pay', { depth: 1, direction: 'in', limit: 50 });
      expect(around?.nodes.map((node) => node.id).sort()).toEqual(['Service:payments', 'Team:team-pay']);
    });

    it('writes a deleted node and its relationships again as new', async () => {
      const again: GraphScope = { orgId: org, realm: 'again' };
      const link = [{ type: 'USES', from_label: 'App', from_key: 'web', to_label: 'Db', to_key: 'main', properties: { mode: 'rw' } }];
      await store.upsertRelationships(again, link);
      expect(await store.deleteNode(again, 'Db', 'main')).toEqual({ relationshipsDeleted: 1 });
      // the end node is created again, and the relationship stored once
      await store.upsertRelationships(again, link);
      await store.upsertRelationships(again, link);
      expect(await store.stats(again, false)).toEqual({ node_count: 2, relationship_count: 1 });
      await store.deleteNode(again, 'App', 'web');
      await store.upsertNodes(again, [{ label: 'App', properties: { _key: 'web', name: 'Web' } }]);
      expect(await store.getNode(again, 'App', 'web')).toMatchObject({ properties: { _key: 'web', name: 'Web' } });
      expect(await store.stats(again, false)).toEqual({ node_count: 2, relationship_count: 0 });
    });

    describe.runIf(options.reopen !== undefined)('after a restart', () => {
      // regression (issue 15): the reloaded schema named BOOLEAN columns by the engine's spelling
      // (BOOL), so every boolean write to an existing property was refused after a restart
      const restart: GraphScope = { orgId: org, realm: 'restart' };
      const typed = { text: 'a', count: 1, ratio: 0.5, enabled: true, disabled: false, tags: ['x', 'y'] };

      it('keeps every property type of nodes and relationships writable with new values of that type', async () => {
        await store.upsertNodes(restart, [{ label: 'Repo', properties: { _key: 'r1', ...typed } }]);
        await store.upsertRelationships(restart, [
          { type: 'MIRRORS', from_label: 'Repo', from_key: 'r1', to_label: 'Repo', to_key: 'r2', properties: { ...typed } },
        ]);
        await store.close();
        store = await options.reopen!();

        const changed = { text: 'b', count: 2, ratio: 1.25, enabled: false, disabled: true, tags: ['z'] };
        await store.upsertNodes(restart, [{ label: 'Repo', properties: { _key: 'r1', ...changed } }]);
        await store.upsertRelationships(restart, [
          { type: 'MIRRORS', from_label: 'Repo', from_key: 'r1', to_label: 'Repo', to_key: 'r2', properties: { ...changed } },
        ]);
        expect((await store.getNode(restart, 'Repo', 'r1'))?.properties).toEqual({ _key: 'r1', ...changed, tags: '["z"]' });
        const around = await store.expand(restart, 'Repo', 'r1', { depth: 1, direction: 'out', limit: 10 });
        expect(around?.relationships.map((rel) => rel.properties)).toEqual([{ ...changed, tags: '["z"]' }]);
      });

      it('still converts and refuses by the reloaded column types', async () => {
        // an integer into a DOUBLE column, anything into STRING, a string into INT64/BOOLEAN refused
        await store.upsertNodes(restart, [{ label: 'Repo', properties: { _key: 'r3', ratio: 3, text: 7 } }]);
        expect((await store.getNode(restart, 'Repo', 'r3'))?.properties).toMatchObject({ ratio: 3, text: '7' });
        for (const bad of [{ count: 'many' }, { enabled: 'yes' }, { count: 1.5 }, { enabled: 1 }]) {
          expect(await errorCode(store.upsertNodes(restart, [{ label: 'Repo', properties: { _key: 'r4', ...bad } }])), JSON.stringify(bad)).toBe(
            'validation_error',
          );
        }
        expect(await store.getNode(restart, 'Repo', 'r4')).toBeNull();
      });
    });

    describe.runIf(options.rawCypher)('Cypher', () => {
      it('answers rows as JSON with parameters', async () => {
        const result = await store.cypher(
          scope,
          'MATCH (a:Service)-[:DEPENDS_ON]->(b:Service {_key: $key}) RETURN a._key AS dependent, a.tier AS tier, b AS target',
          { key: 'payments' },
          { allowWrite: false },
        );
        expect(result.columns).toEqual(['dependent', 'tier', 'target']);
        expect(result.rows).toEqual([
          {
            dependent: 'checkout',
            tier: 3,
            target: {
              id: 'Service:payments',
              label: 'Service',
              key: 'payments',
              properties: { _key: 'payments', name: 'Payments API', tier: 1, owner: 'team-pay' },
            },
          },
        ]);
      });

      it('refuses a write without permission, and runs it with permission', async () => {
        const write = "MATCH (s:Service {_key: 'ledger'}) SET s.owner = 'team-ledger' RETURN s.owner AS owner";
        expect(await errorCode(store.cypher(scope, write, {}, { allowWrite: false }))).toBe('forbidden');
        expect((await store.getNode(scope, 'Service', 'ledger'))?.properties['owner']).toBeUndefined();
        expect((await store.cypher(scope, write, {}, { allowWrite: true })).rows).toEqual([{ owner: 'team-ledger' }]);
      });

      it('upserts what a Cypher write created as stored: updated, never duplicated', async () => {
        const mixed: GraphScope = { orgId: org, realm: 'cypher-writes' };
        await store.upsertRelationships(mixed, [
          { type: 'RUNS_ON', from_label: 'Svc', from_key: 'api', to_label: 'Host', to_key: 'h1', properties: { since: 1 } },
        ]);
        await store.cypher(mixed, "CREATE (:Svc {_key: 'made'})", {}, { allowWrite: true });
        await store.cypher(mixed, "MATCH (a:Svc {_key: 'made'}), (h:Host {_key: 'h1'}) CREATE (a)-[:RUNS_ON {since: 2}]->(h)", {}, { allowWrite: true });
        await store.upsertNodes(mixed, [{ label: 'Svc', properties: { _key: 'made', name: 'made by Cypher' } }]);
        await store.upsertRelationships(mixed, [
          { type: 'RUNS_ON', from_label: 'Svc', from_key: 'made', to_label: 'Host', to_key: 'h1', properties: { since: 3 } },
        ]);
        expect(await store.stats(mixed, false)).toEqual({ node_count: 3, relationship_count: 2 });
        expect((await store.getNode(mixed, 'Svc', 'made'))?.properties).toEqual({ _key: 'made', name: 'made by Cypher' });
        const edges = await store.cypher(mixed, "MATCH (:Svc {_key: 'made'})-[r:RUNS_ON]->(:Host) RETURN r.since AS since", {}, { allowWrite: false });
        expect(edges.rows).toEqual([{ since: 3 }]);
      });

      it('does not take words inside strings, names or comments for clauses', async () => {
        const result = await store.cypher(
          scope,
          "MATCH (s:Service) WHERE s.name <> 'DELETE me' // SET\nRETURN count(s) AS `create`",
          {},
          { allowWrite: false },
        );
        expect(result.rows).toEqual([{ create: 3 }]);
      });

      it('answers a syntax error with the engine message, and refuses clauses that leave the realm', async () => {
        expect(await errorCode(store.cypher(scope, 'MATCH (n RETURN n', {}, { allowWrite: true }))).toBe('cypher_syntax_error');
        expect(await errorCode(store.cypher(scope, "LOAD FROM '/etc/passwd' (file_format='csv') RETURN *", {}, { allowWrite: true }))).toBe('validation_error');
        expect(await errorCode(store.cypher(scope, "ATTACH '/tmp/other.kuzu' AS other (dbtype kuzu)", {}, { allowWrite: true }))).toBe('validation_error');
        expect(await errorCode(store.cypher(scope, 'MATCH (n) RETURN n; MATCH (m) DETACH DELETE m', {}, { allowWrite: true }))).toBe('validation_error');
        expect(await errorCode(store.cypher(scope, 'DROP TABLE Service', {}, { allowWrite: true }))).toBe('validation_error');
        // the store still works after the failures
        expect((await store.stats(scope, false)).node_count).toBeGreaterThan(0);
      });
    });

    it('hands syncs a sink bound to the scope', async () => {
      const sink = store.sinkFor(org, 'sinkrealm');
      await sink.upsertNodes([{ label: 'Repo', properties: { _key: 'api', stars: 5 } }]);
      await sink.upsertRelationships([{ type: 'BUILDS', from_label: 'Repo', from_key: 'api', to_label: 'Service', to_key: 'payments' }]);
      const stats = await store.stats({ orgId: org, realm: 'sinkrealm' }, true);
      expect(stats).toMatchObject({ node_count: 2, relationship_count: 1, labels: { Repo: 1, Service: 1 } });
    });
  });
}
