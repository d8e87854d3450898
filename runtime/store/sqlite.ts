/**
 * Embedded metadata store: one SQLite file (WAL) through better-sqlite3.
 *
 * Each collection is a table `(rowid, id, org_id, data JSON)`; unique sets and
 * indexes are expression indexes on `json_extract`, text search is an FTS5
 * table kept in step inside the same transaction.
 *
 * Group commit: the writes of one event-loop turn share one transaction
 * (`GroupCommit`), committed at the end of the turn. A write's own promise
 * settles at once (code inside the process sees its effects in order, as
 * with one transaction per write); what leaves the process waits for
 * `committed()`: the HTTP edge holds every response until the turn's
 * transaction is committed, so an acknowledged write survives `kill -9`
 * while a burst of writes (webhook intake: a delivery, its run, the run's
 * refusal, for every request of the turn) costs one commit instead of one each.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { PRIVATE_DIR_MODE, tightenFiles } from '../file-modes.js';
import { dirname } from 'node:path';
import { newId, nowIso } from '../ids.js';
import {
  UniqueViolation,
  type CollectionSpec,
  type Filter,
  type GlobalCollection,
  type ListOptions,
  type MetadataStore,
  type NewDoc,
  type OrgCollection,
  type OrgId,
  type Page,
  type Patch,
  type SearchHit,
  type StoredFields,
} from './types.js';
import { checkField, jsonPath, whereClause, rangeClause, ftsQuery } from './sqlite-sql.js';

const GLOBAL_ORG = '';

interface Row {
  readonly data: string;
}

class SqliteCollection<T extends StoredFields> {
  private readonly table: string;
  private readonly fts: string | null;
  private readonly statements: {
    insert: Database.Statement;
    get: Database.Statement;
    update: Database.Statement;
    delete: Database.Statement;
    ftsInsert: Database.Statement | null;
    ftsDelete: Database.Statement | null;
  };

  /** bumped on every write, per organization: this process is the file's only writer */
  private readonly revisions = new Map<string, number>();
  /** prepared statements by SQL text: filters vary, the shapes repeat */
  private readonly prepared = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    readonly spec: CollectionSpec,
  ) {
    checkField(spec.name);
    this.table = `c_${spec.name}`;
    this.fts = spec.text && spec.text.length > 0 ? `f_${spec.name}` : null;
    this.createSchema();
    this.statements = {
      insert: db.prepare(`INSERT INTO ${this.table} (id, org_id, data) VALUES (?, ?, ?)`),
      get: db.prepare(`SELECT rowid, data FROM ${this.table} WHERE org_id = ? AND id = ?`),
      update: db.prepare(`UPDATE ${this.table} SET data = ? WHERE org_id = ? AND id = ?`),
      delete: db.prepare(`DELETE FROM ${this.table} WHERE org_id = ? AND id = ? RETURNING rowid`),
      ftsInsert: this.fts ? db.prepare(`INSERT INTO ${this.fts} (rowid, body) VALUES (?, ?)`) : null,
      ftsDelete: this.fts ? db.prepare(`DELETE FROM ${this.fts} WHERE rowid = ?`) : null,
    };
  }

  revision(org: string): number {
    return this.revisions.get(org) ?? 0;
  }

  private touch(org: string): void {
    this.revisions.set(org, this.revision(org) + 1);
  }

  private sql(text: string): Database.Statement {
    let statement = this.prepared.get(text);
    if (!statement) {
      // `in` filters of many lengths could grow the cache without end
      if (this.prepared.size >= 256) this.prepared.clear();
      statement = this.db.prepare(text);
      this.prepared.set(text, statement);
    }
    return statement;
  }

  private createSchema(): void {
    const { db, table, spec } = this;
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT NOT NULL UNIQUE,
      org_id TEXT NOT NULL,
      data TEXT NOT NULL
    )`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${table}_org_id ON ${table} (org_id, id)`);
    for (const fields of spec.unique ?? []) {
      const name = `${table}_u_${fields.join('_')}`;
      db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${name} ON ${table} (org_id, ${fields.map(jsonPath).join(', ')})`);
    }
    for (const field of spec.indexes ?? []) {
      db.exec(`CREATE INDEX IF NOT EXISTS ${table}_i_${checkField(field)} ON ${table} (org_id, ${jsonPath(field)})`);
    }
    if (this.fts) {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${this.fts} USING fts5(body, tokenize = 'porter unicode61')`);
    }
  }

  private ftsBody(doc: Record<string, unknown>): string {
    return (this.spec.text ?? [])
      .map((field) => doc[field])
      .filter((value): value is string => typeof value === 'string')
      .join('\n');
  }

  private translateUnique(error: unknown): never {
    if (error instanceof Error && 'code' in error && error.code === 'SQLITE_CONSTRAINT_UNIQUE') {
      const match = /UNIQUE constraint failed: (.*)$/.exec(error.message);
      const failed = match?.[1] ?? '';
      const fields =
        (this.spec.unique ?? []).find((set) => set.every((field) => failed.includes(field))) ??
        (failed.includes('.id') ? ['id'] : (this.spec.unique?.[0] ?? ['id']));
      throw new UniqueViolation(this.spec.name, fields);
    }
    throw error;
  }

  insert(org: string, input: NewDoc<T>): T {
    const now = nowIso();
    const doc = { ...input, id: input.id ?? newId(this.spec.idPrefix), created_at: now, updated_at: now } as unknown as T;
    const write = this.db.transaction(() => {
      const info = this.statements.insert.run(doc.id, org, JSON.stringify(doc));
      this.statements.ftsInsert?.run(info.lastInsertRowid, this.ftsBody(doc as unknown as Record<string, unknown>));
    });
    try {
      write();
    } catch (error) {
      this.translateUnique(error);
    }
    this.touch(org);
    return doc;
  }

  get(org: string, id: string): T | null {
    const row = this.statements.get.get(org, id) as Row | undefined;
    return row ? (JSON.parse(row.data) as T) : null;
  }

  findOne(org: string, filter: Filter): T | null {
    const where = whereClause(filter);
    const row = this.sql(`SELECT data FROM ${this.table} WHERE org_id = ?${where.sql} ORDER BY id LIMIT 1`).get(org, ...where.params) as Row | undefined;
    return row ? (JSON.parse(row.data) as T) : null;
  }

  findAll(org: string, filter?: Filter): T[] {
    const where = whereClause(filter);
    const rows = this.sql(`SELECT data FROM ${this.table} WHERE org_id = ?${where.sql} ORDER BY id`).all(org, ...where.params) as Row[];
    return rows.map((row) => JSON.parse(row.data) as T);
  }

  count(org: string, filter?: Filter): number {
    const where = whereClause(filter);
    const row = this.sql(`SELECT count(*) AS n FROM ${this.table} WHERE org_id = ?${where.sql}`).get(org, ...where.params) as { n: number };
    return row.n;
  }

  list(org: string, options: ListOptions): Page<T> {
    const where = whereClause(options.filter);
    const range = rangeClause(options.idRange);
    const after = options.after ?? '';
    const rows = this.sql(`SELECT data FROM ${this.table} WHERE org_id = ?${where.sql}${range.sql} AND id > ? ORDER BY id LIMIT ?`).all(
      org,
      ...where.params,
      ...range.params,
      after,
      options.limit + 1,
    ) as Row[];
    const more = rows.length > options.limit;
    const items = rows.slice(0, options.limit).map((row) => JSON.parse(row.data) as T);
    const total =
      range.sql === ''
        ? this.count(org, options.filter)
        : (
            this.sql(`SELECT count(*) AS n FROM ${this.table} WHERE org_id = ?${where.sql}${range.sql}`).get(org, ...where.params, ...range.params) as {
              n: number;
            }
          ).n;
    return { items, total, nextAfter: more ? (items.at(-1)?.id ?? null) : null };
  }

  update(org: string, id: string, patch: Patch<Omit<T, keyof StoredFields>>): T | null {
    const apply = this.db.transaction((): T | null => {
      const row = this.statements.get.get(org, id) as (Row & { rowid: number }) | undefined;
      if (!row) return null;
      const next: Record<string, unknown> = { ...(JSON.parse(row.data) as Record<string, unknown>) };
      for (const [key, value] of Object.entries(patch)) {
        if (key === 'id' || key === 'created_at') continue;
        if (value === undefined) delete next[key];
        else next[key] = value;
      }
      next['updated_at'] = nowIso();
      this.statements.update.run(JSON.stringify(next), org, id);
      if (this.fts) {
        this.statements.ftsDelete?.run(row.rowid);
        this.statements.ftsInsert?.run(row.rowid, this.ftsBody(next));
      }
      return next as unknown as T;
    });
    try {
      const updated = apply();
      if (updated) this.touch(org);
      return updated;
    } catch (error) {
      return this.translateUnique(error);
    }
  }

  delete(org: string, id: string): boolean {
    const remove = this.db.transaction((): boolean => {
      const row = this.statements.delete.get(org, id) as { rowid: number } | undefined;
      if (!row) return false;
      this.statements.ftsDelete?.run(row.rowid);
      return true;
    });
    const removed = remove();
    if (removed) this.touch(org);
    return removed;
  }

  deleteWhere(org: string, filter: Filter): number {
    const where = whereClause(filter);
    const remove = this.db.transaction((): number => {
      const rows = this.sql(`DELETE FROM ${this.table} WHERE org_id = ?${where.sql} RETURNING rowid`).all(org, ...where.params) as { rowid: number }[];
      for (const row of rows) this.statements.ftsDelete?.run(row.rowid);
      return rows.length;
    });
    const removed = remove();
    if (removed > 0) this.touch(org);
    return removed;
  }

  search(org: string, query: string, options: { filter?: Filter; limit: number }): SearchHit<T>[] {
    if (!this.fts) throw new Error(`collection ${this.spec.name} declares no text fields`);
    const match = ftsQuery(query);
    if (match === null) return [];
    const where = whereClause(options.filter);
    const rows = this.sql(
      `SELECT c.data AS data, bm25(${this.fts}) AS rank FROM ${this.fts} f
         JOIN ${this.table} c ON c.rowid = f.rowid
         WHERE ${this.fts} MATCH ? AND c.org_id = ?${where.sql.replaceAll('json_extract(data', 'json_extract(c.data')}
         ORDER BY rank LIMIT ?`,
    ).all(match, org, ...where.params, options.limit) as (Row & { rank: number })[];
    // bm25() is lower-is-better and negative; flip it so higher is better
    return rows.map((row) => ({ doc: JSON.parse(row.data) as T, score: -row.rank }));
  }

  findAcrossOrgs(filter: Filter, limit: number): (T & { org_id: OrgId })[] {
    const where = whereClause(filter);
    const rows = this.sql(`SELECT org_id, data FROM ${this.table} WHERE 1 = 1${where.sql} ORDER BY id LIMIT ?`).all(...where.params, limit) as (Row & {
      org_id: OrgId;
    })[];
    return rows.map((row) => ({ ...(JSON.parse(row.data) as T), org_id: row.org_id }));
  }
}

/**
 * One open transaction per event-loop turn: the first write of a turn begins
 * it and `setImmediate` commits it. Each write runs in its own savepoint
 * (better-sqlite3 nests `db.transaction` that way), so a write that fails (a
 * unique violation) is undone alone and the others of the turn stay.
 */
class GroupCommit {
  /** the open transaction: settles once it has committed */
  private open: { readonly committed: Promise<void>; readonly resolve: () => void; readonly reject: (error: unknown) => void } | null = null;

  constructor(private readonly db: Database.Database) {}

  write<T>(apply: () => T): T {
    if (this.open === null) {
      this.db.exec('BEGIN');
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const committed = new Promise<void>((done, failed) => {
        resolve = done;
        reject = failed;
      });
      // a caller may never wait for it; a failed commit is reported to those who do
      committed.catch(() => undefined);
      this.open = { committed, resolve, reject };
      setImmediate(() => this.commit());
    }
    return apply();
  }

  /** settles when the open transaction has committed; null when nothing is uncommitted */
  committed(): Promise<void> | null {
    return this.open?.committed ?? null;
  }

  /** Commits the open transaction (also called before close). */
  commit(): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    try {
      // an I/O error inside the turn makes SQLite roll the whole transaction back: nothing of it was written
      if (!this.db.inTransaction) throw new Error('the transaction of this write batch was rolled back by the engine');
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      open.reject(error);
      return;
    }
    open.resolve();
  }
}

export class SqliteMetadataStore implements MetadataStore {
  readonly engine = 'sqlite';
  private readonly db: Database.Database;
  private readonly batch: GroupCommit;

  constructor(readonly path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    if (path !== ':memory:') tightenFiles([path, `${path}-wal`, `${path}-shm`]);
    // NORMAL under WAL survives a process kill; only an OS crash can lose the last commits
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    this.batch = new GroupCommit(this.db);
  }

  async orgCollection<T extends StoredFields>(spec: CollectionSpec & { scope: 'org' }): Promise<OrgCollection<T>> {
    const c = new SqliteCollection<T>(this.db, spec);
    const { batch } = this;
    return {
      spec,
      insert: async (org, doc) => batch.write(() => c.insert(org, doc)),
      get: async (org, id) => c.get(org, id),
      findOne: async (org, filter) => c.findOne(org, filter),
      findAll: async (org, filter) => c.findAll(org, filter),
      list: async (org, options) => c.list(org, options),
      count: async (org, filter) => c.count(org, filter),
      update: async (org, id, patch) => batch.write(() => c.update(org, id, patch)),
      delete: async (org, id) => batch.write(() => c.delete(org, id)),
      deleteWhere: async (org, filter) => batch.write(() => c.deleteWhere(org, filter)),
      search: async (org, query, options) => c.search(org, query, options),
      findAcrossOrgs: async (filter, limit) => c.findAcrossOrgs(filter, limit),
      revision: (org) => c.revision(org),
    };
  }

  async globalCollection<T extends StoredFields>(spec: CollectionSpec & { scope: 'global' }): Promise<GlobalCollection<T>> {
    const c = new SqliteCollection<T>(this.db, spec);
    const { batch } = this;
    return {
      spec,
      insert: async (doc) => batch.write(() => c.insert(GLOBAL_ORG, doc)),
      get: async (id) => c.get(GLOBAL_ORG, id),
      findOne: async (filter) => c.findOne(GLOBAL_ORG, filter),
      findAll: async (filter) => c.findAll(GLOBAL_ORG, filter),
      update: async (id, patch) => batch.write(() => c.update(GLOBAL_ORG, id, patch)),
      delete: async (id) => batch.write(() => c.delete(GLOBAL_ORG, id)),
    };
  }

  committed(): Promise<void> | null {
    return this.batch.committed();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.batch.commit();
    this.db.close();
  }
}
