/**
 * Group commit in the SQLite metadata store: the writes of one event-loop
 * turn share one transaction; `committed()` settles once it is durable (what
 * a second connection, or the process after a `kill -9`, sees).
 */
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteMetadataStore } from '../../runtime/store/sqlite.js';
import { asOrgId, UniqueViolation, type OrgCollection, type StoredFields } from '../../runtime/store/types.js';

interface Note extends StoredFields {
  readonly name: string;
}

describe('sqlite metadata store: group commit', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'group-commit-')), 'metadata.db');
  const org = asOrgId('org_gc');
  let store: SqliteMetadataStore;
  let notes: OrgCollection<Note>;
  let observer: Database.Database;

  beforeAll(async () => {
    store = new SqliteMetadataStore(path);
    notes = await store.orgCollection<Note>({ name: 'notes', idPrefix: 'not', scope: 'org', unique: [['name']] });
    observer = new Database(path, { readonly: true });
  });
  afterAll(async () => {
    observer.close();
    await store.close();
  });

  const committedNames = (): string[] =>
    (observer.prepare(`SELECT json_extract(data, '$.name') AS name FROM c_notes ORDER BY name`).all() as { name: string }[]).map((row) => row.name);

  it('reports a write as uncommitted until the end of the turn, then commits it', async () => {
    expect(store.committed()).toBeNull();
    const first = await notes.insert(org, { name: 'first' });
    // this connection sees the row; the transaction holding it is still open
    expect((await notes.get(org, first.id))?.name).toBe('first');
    expect(committedNames()).toEqual([]);
    const committed = store.committed();
    expect(committed).toBeInstanceOf(Promise);
    await committed;
    expect(committedNames()).toEqual(['first']);
    expect(store.committed()).toBeNull();
  });

  it('commits the writes of one turn together, updates and deletes included', async () => {
    const a = await notes.insert(org, { name: 'a' });
    await store.committed();
    const first = await notes.findOne(org, { name: 'first' });
    const results = await Promise.all([
      notes.insert(org, { name: 'b' }),
      notes.update(org, a.id, { name: 'a2' }),
      notes.delete(org, first?.id ?? 'missing'),
      notes.insert(org, { name: 'b' }).catch((error: unknown) => error),
    ]);
    expect(results[1]?.name).toBe('a2');
    expect(results[2]).toBe(true);
    // the failed write was undone alone
    expect(results[3]).toBeInstanceOf(UniqueViolation);
    expect(committedNames()).toEqual(['a', 'first']);
    await store.committed();
    expect(committedNames()).toEqual(['a2', 'b']);
  });

  it('commits what is open when the store closes', async () => {
    const second = new SqliteMetadataStore(join(mkdtempSync(join(tmpdir(), 'group-commit-close-')), 'metadata.db'));
    const items = await second.orgCollection<Note>({ name: 'notes', idPrefix: 'not', scope: 'org' });
    await items.insert(org, { name: 'last' });
    const committed = second.committed();
    await second.close();
    await expect(committed).resolves.toBeUndefined();
    const reopened = new SqliteMetadataStore(second.path);
    const again = await reopened.orgCollection<Note>({ name: 'notes', idPrefix: 'not', scope: 'org' });
    expect((await again.findAll(org)).map((note) => note.name)).toEqual(['last']);
    await reopened.close();
  });
});
