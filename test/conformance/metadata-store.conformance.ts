/**
 * The metadata store conformance kit: every implementation of MetadataStore
 * runs these same cases (test/conformance/metadata-store.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asOrgId, UniqueViolation, type MetadataStore, type OrgCollection, type StoredFields } from '../../runtime/store/types.js';

interface Thing extends StoredFields {
  readonly name: string;
  readonly group?: string;
  readonly flag?: boolean;
  readonly n?: number;
  readonly note?: string;
}

export function metadataStoreConformance(engine: string, open: () => Promise<MetadataStore>): void {
  describe(`metadata store conformance: ${engine}`, () => {
    let store: MetadataStore;
    let things: OrgCollection<Thing>;
    // a fresh collection name per run keeps runs against a shared server independent
    const suffix = randomBytes(4).toString('hex');
    const orgA = asOrgId(`org_a_${suffix}`);
    const orgB = asOrgId(`org_b_${suffix}`);

    beforeAll(async () => {
      store = await open();
      things = await store.orgCollection<Thing>({
        name: `things_${suffix}`,
        idPrefix: 'thg',
        scope: 'org',
        unique: [['name']],
        indexes: ['group'],
        text: ['note'],
      });
    });
    afterAll(async () => store.close());

    it('inserts with generated id and timestamps, and reads back', async () => {
      const doc = await things.insert(orgA, { name: 'alpha', group: 'g1', flag: true, n: 1 });
      expect(doc.id).toMatch(/^thg_[0-9a-z]{26}$/);
      expect(Date.parse(doc.created_at)).not.toBeNaN();
      expect(doc.updated_at).toBe(doc.created_at);
      expect(await things.get(orgA, doc.id)).toEqual(doc);
    });

    it('isolates organizations on every operation', async () => {
      const doc = await things.insert(orgA, { name: 'private', group: 'iso' });
      expect(await things.get(orgB, doc.id)).toBeNull();
      expect(await things.findOne(orgB, { name: 'private' })).toBeNull();
      expect(await things.update(orgB, doc.id, { group: 'stolen' })).toBeNull();
      expect(await things.delete(orgB, doc.id)).toBe(false);
      expect(await things.count(orgB, { group: 'iso' })).toBe(0);
      expect((await things.list(orgB, { limit: 10, filter: { group: 'iso' } })).items).toEqual([]);
      expect(await things.deleteWhere(orgB, { group: 'iso' })).toBe(0);
      expect((await things.get(orgA, doc.id))?.group).toBe('iso');
    });

    it('enforces unique sets per organization and reports the fields', async () => {
      await things.insert(orgA, { name: 'unique-1' });
      await expect(things.insert(orgA, { name: 'unique-1' })).rejects.toBeInstanceOf(UniqueViolation);
      await expect(things.insert(orgA, { name: 'unique-1' })).rejects.toMatchObject({ fields: ['name'] });
      const other = await things.insert(orgB, { name: 'unique-1' });
      expect(other.name).toBe('unique-1');
      const second = await things.insert(orgA, { name: 'unique-2' });
      await expect(things.update(orgA, second.id, { name: 'unique-1' })).rejects.toBeInstanceOf(UniqueViolation);
    });

    it('filters by equality, null-free booleans and `in`', async () => {
      await things.insert(orgA, { name: 'f1', group: 'filter', flag: true, n: 1 });
      await things.insert(orgA, { name: 'f2', group: 'filter', flag: false, n: 2 });
      await things.insert(orgA, { name: 'f3', group: 'filter-other', flag: true, n: 3 });
      expect((await things.findAll(orgA, { group: 'filter', flag: true })).map((d) => d.name)).toEqual(['f1']);
      expect((await things.findAll(orgA, { group: 'filter', flag: false })).map((d) => d.name)).toEqual(['f2']);
      expect((await things.findAll(orgA, { group: { in: ['filter', 'filter-other'] }, n: { in: [1, 3] } })).map((d) => d.name)).toEqual(['f1', 'f3']);
      expect(await things.findAll(orgA, { n: { in: [] } })).toEqual([]);
      expect(await things.count(orgA, { group: 'filter' })).toBe(2);
    });

    it('pages by id in creation order with a stable cursor and a total', async () => {
      const names: string[] = [];
      for (let i = 0; i < 7; i++) {
        names.push(`page-${i}`);
        await things.insert(orgA, { name: `page-${i}`, group: 'paged' });
      }
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page = await things.list(orgA, { limit: 3, after, filter: { group: 'paged' } });
        expect(page.total).toBe(7);
        seen.push(...page.items.map((d) => d.name));
        after = page.nextAfter;
        pages += 1;
      } while (after !== null);
      expect(pages).toBe(3);
      expect(seen).toEqual(names);
    });

    it('narrows a list and its total to an id range, the cursor paging inside it', async () => {
      const docs = [];
      for (let i = 0; i < 6; i++) docs.push(await things.insert(orgA, { name: `range-${i}`, group: 'ranged' }));
      const idRange = { gte: docs[1]!.id, lt: docs[5]!.id };
      const first = await things.list(orgA, { limit: 2, filter: { group: 'ranged' }, idRange });
      expect(first.total).toBe(4);
      expect(first.items.map((d) => d.name)).toEqual(['range-1', 'range-2']);
      const second = await things.list(orgA, { limit: 2, after: first.nextAfter, filter: { group: 'ranged' }, idRange });
      expect(second).toMatchObject({ total: 4, nextAfter: null });
      expect(second.items.map((d) => d.name)).toEqual(['range-3', 'range-4']);
      expect((await things.list(orgA, { limit: 10, filter: { group: 'ranged' }, idRange: { gte: docs[4]!.id } })).total).toBe(2);
    });

    it('patches fields, removes undefined ones, keeps id and created_at', async () => {
      const doc = await things.insert(orgA, { name: 'patch-me', group: 'x', note: 'drop me' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const updated = await things.update(orgA, doc.id, { group: 'y', note: undefined });
      expect(updated).toMatchObject({ id: doc.id, name: 'patch-me', group: 'y', created_at: doc.created_at });
      expect(updated && 'note' in updated).toBe(false);
      expect(updated?.updated_at).not.toBe(doc.updated_at);
      expect(await things.get(orgA, doc.id)).toEqual(updated);
    });

    it('deletes one and many', async () => {
      const doc = await things.insert(orgA, { name: 'del-1', group: 'del' });
      await things.insert(orgA, { name: 'del-2', group: 'del' });
      await things.insert(orgA, { name: 'del-3', group: 'del' });
      expect(await things.delete(orgA, doc.id)).toBe(true);
      expect(await things.delete(orgA, doc.id)).toBe(false);
      expect(await things.deleteWhere(orgA, { group: 'del' })).toBe(2);
      expect(await things.count(orgA, { group: 'del' })).toBe(0);
    });

    it('searches text fields with stemming, ranked, within the organization', async () => {
      await things.insert(orgA, { name: 's1', note: 'the deployment pipeline failed on friday' });
      await things.insert(orgA, { name: 's2', note: 'lunch menu for the team offsite' });
      await things.insert(orgA, { name: 's3', note: 'deployments of the payment service happen on deploy days' });
      await things.insert(orgB, { name: 's4', note: 'deployment secrets of another organization' });
      const hits = await things.search(orgA, 'Deployments', { limit: 10 });
      expect(hits.map((hit) => hit.doc.name).sort()).toEqual(['s1', 's3']);
      for (const hit of hits) expect(hit.score).toBeGreaterThan(0);
      expect(await things.search(orgA, '  "*) OR (  ', { limit: 10 })).toEqual([]);
      const updated = await things.findOne(orgA, { name: 's2' });
      await things.update(orgA, updated?.id ?? '', { note: 'deployment of lunch' });
      expect((await things.search(orgA, 'deployment', { limit: 10 })).length).toBe(3);
    });

    it('finds across organizations for identity lookups only when asked', async () => {
      await things.insert(orgA, { name: 'cross', group: `cross-${suffix}` });
      await things.insert(orgB, { name: 'cross', group: `cross-${suffix}` });
      const found = await things.findAcrossOrgs({ group: `cross-${suffix}` }, 10);
      expect(found.map((doc) => doc.org_id).sort()).toEqual([orgA, orgB].sort());
    });

    it('keeps global collections separate from org scope', async () => {
      const people = await store.globalCollection<Thing>({ name: `people_${suffix}`, idPrefix: 'ppl', scope: 'global', unique: [['name']] });
      const ann = await people.insert({ name: 'ann' });
      await expect(people.insert({ name: 'ann' })).rejects.toBeInstanceOf(UniqueViolation);
      expect((await people.findOne({ name: 'ann' }))?.id).toBe(ann.id);
      expect((await people.update(ann.id, { group: 'g' }))?.group).toBe('g');
      expect(await people.delete(ann.id)).toBe(true);
      expect(await people.get(ann.id)).toBeNull();
    });

    it('changes the revision of an organization on each of its writes only (or reports none)', async () => {
      const before = things.revision(orgA);
      if (before === null) {
        // engines shared by several processes cannot promise exact revisions; caches then stay off
        expect(things.revision(orgB)).toBeNull();
        return;
      }
      const otherBefore = things.revision(orgB);
      const doc = await things.insert(orgA, { name: 'rev-1' });
      const afterInsert = things.revision(orgA);
      expect(afterInsert).not.toBe(before);
      await things.update(orgA, doc.id, { group: 'rev' });
      const afterUpdate = things.revision(orgA);
      expect(afterUpdate).not.toBe(afterInsert);
      await things.delete(orgA, doc.id);
      expect(things.revision(orgA)).not.toBe(afterUpdate);
      expect(things.revision(orgB)).toBe(otherBefore);
      const unchanged = things.revision(orgA);
      await things.update(orgA, 'no-such-id', { group: 'x' });
      await things.get(orgA, 'anything');
      expect(things.revision(orgA)).toBe(unchanged);
    });

    it('keeps the other writes of a burst when one of them fails', async () => {
      await things.insert(orgA, { name: 'burst-taken' });
      // issued together, as concurrent requests do: an engine may commit them as one batch
      const results = await Promise.allSettled([
        things.insert(orgA, { name: 'burst-1', group: 'burst' }),
        things.insert(orgA, { name: 'burst-taken', group: 'burst' }),
        things.insert(orgA, { name: 'burst-2', group: 'burst' }),
      ]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(results[1]).toMatchObject({ status: 'rejected', reason: expect.any(UniqueViolation) });
      expect((await things.findAll(orgA, { group: 'burst' })).map((doc) => doc.name).sort()).toEqual(['burst-1', 'burst-2']);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
