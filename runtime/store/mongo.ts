/**
 * Scale-out metadata store: MongoDB through the official driver, chosen by
 * MONGODB_URL. Same contract and conformance suite as the SQLite store.
 *
 * Documents are stored as `{ _id: id, org_id, ...fields }`; unique sets are
 * partial unique indexes (a missing field never collides), text search uses a
 * `$text` index over the spec's text fields.
 */
import { MongoClient, MongoServerError, type Collection, type Db, type Document } from 'mongodb';
import { newId, nowIso } from '../ids.js';
import {
  UniqueViolation,
  type CollectionSpec,
  type Filter,
  type GlobalCollection,
  type IdRange,
  type MetadataStore,
  type NewDoc,
  type OrgCollection,
  type OrgId,
  type StoredFields,
} from './types.js';

const GLOBAL_ORG = '';

function toQuery(org: string | null, filter: Filter | undefined): Document {
  const query: Document = org === null ? {} : { org_id: org };
  for (const [field, condition] of Object.entries(filter ?? {})) {
    if (field === 'id') {
      query['_id'] = condition !== null && typeof condition === 'object' ? { $in: [...condition.in] } : condition;
    } else if (condition !== null && typeof condition === 'object') {
      query[field] = { $in: [...condition.in] };
    } else {
      query[field] = condition;
    }
  }
  return query;
}

function fromStored<T>(stored: Document | null): T | null {
  if (stored === null) return null;
  const { _id, org_id: _org, ...rest } = stored;
  return { id: _id as string, ...rest } as T;
}

class MongoCollection<T extends StoredFields> {
  constructor(
    private readonly collection: Collection<Document>,
    readonly spec: CollectionSpec,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ org_id: 1, _id: 1 });
    for (const fields of this.spec.unique ?? []) {
      const keys: Document = { org_id: 1 };
      const partial: Document = {};
      for (const field of fields) {
        keys[field] = 1;
        partial[field] = { $exists: true };
      }
      await this.collection.createIndex(keys, {
        unique: true,
        name: `u_${fields.join('_')}`,
        partialFilterExpression: partial,
      });
    }
    for (const field of this.spec.indexes ?? []) {
      await this.collection.createIndex({ org_id: 1, [field]: 1 });
    }
    if (this.spec.text && this.spec.text.length > 0) {
      await this.collection.createIndex(Object.fromEntries(this.spec.text.map((field) => [field, 'text'])), {
        name: 'text',
      });
    }
  }

  private translateUnique(error: unknown): never {
    if (error instanceof MongoServerError && error.code === 11000) {
      const index = /index: (\S+)/.exec(error.message)?.[1] ?? '';
      const fields = (this.spec.unique ?? []).find((set) => index === `u_${set.join('_')}`) ?? ['id'];
      throw new UniqueViolation(this.spec.name, fields);
    }
    throw error;
  }

  async insert(org: string, input: NewDoc<T>): Promise<T> {
    const now = nowIso();
    const { id: givenId, ...fields } = input as NewDoc<T> & Record<string, unknown>;
    const id = givenId ?? newId(this.spec.idPrefix);
    const stored: Document = { _id: id, org_id: org, ...fields, created_at: now, updated_at: now };
    // a field set to undefined must not be stored (null would collide in unique indexes)
    for (const [key, value] of Object.entries(stored)) if (value === undefined) delete stored[key];
    try {
      await this.collection.insertOne(stored);
    } catch (error) {
      this.translateUnique(error);
    }
    return fromStored<T>(stored) as T;
  }

  async get(org: string, id: string): Promise<T | null> {
    return fromStored<T>(await this.collection.findOne({ _id: id, org_id: org } as Document));
  }

  async findOne(org: string, filter: Filter): Promise<T | null> {
    return fromStored<T>(await this.collection.findOne(toQuery(org, filter), { sort: { _id: 1 } }));
  }

  async findAll(org: string, filter?: Filter): Promise<T[]> {
    const rows = await this.collection.find(toQuery(org, filter)).sort({ _id: 1 }).toArray();
    return rows.map((row) => fromStored<T>(row) as T);
  }

  async count(org: string, filter?: Filter): Promise<number> {
    return this.collection.countDocuments(toQuery(org, filter));
  }

  async list(
    org: string,
    options: { filter?: Filter; limit: number; after?: string | null; idRange?: IdRange },
  ): Promise<{ items: T[]; total: number; nextAfter: string | null }> {
    const bounds: Document = {};
    if (options.idRange?.gte !== undefined) bounds['$gte'] = options.idRange.gte;
    if (options.idRange?.lt !== undefined) bounds['$lt'] = options.idRange.lt;
    const ranged = toQuery(org, options.filter);
    const query = Object.keys(bounds).length === 0 ? ranged : { ...ranged, _id: bounds };
    const paged = options.after ? { ...query, _id: { ...bounds, $gt: options.after } } : query;
    const [rows, total] = await Promise.all([
      this.collection
        .find(paged)
        .sort({ _id: 1 })
        .limit(options.limit + 1)
        .toArray(),
      this.collection.countDocuments(query),
    ]);
    const more = rows.length > options.limit;
    const items = rows.slice(0, options.limit).map((row) => fromStored<T>(row) as T);
    return { items, total, nextAfter: more ? (items.at(-1)?.id ?? null) : null };
  }

  async update(org: string, id: string, patch: Record<string, unknown>): Promise<T | null> {
    const set: Document = { updated_at: nowIso() };
    const unset: Document = {};
    for (const [key, value] of Object.entries(patch)) {
      if (key === 'id' || key === 'created_at' || key === '_id' || key === 'org_id') continue;
      if (value === undefined) unset[key] = '';
      else set[key] = value;
    }
    const update: Document = Object.keys(unset).length > 0 ? { $set: set, $unset: unset } : { $set: set };
    try {
      const result = await this.collection.findOneAndUpdate({ _id: id, org_id: org } as Document, update, {
        returnDocument: 'after',
      });
      return fromStored<T>(result);
    } catch (error) {
      return this.translateUnique(error);
    }
  }

  async delete(org: string, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, org_id: org } as Document);
    return result.deletedCount === 1;
  }

  async deleteWhere(org: string, filter: Filter): Promise<number> {
    const result = await this.collection.deleteMany(toQuery(org, filter));
    return result.deletedCount;
  }

  async search(org: string, query: string, options: { filter?: Filter; limit: number }) {
    if (!this.spec.text || this.spec.text.length === 0) {
      throw new Error(`collection ${this.spec.name} declares no text fields`);
    }
    const terms = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    if (terms.length === 0) return [];
    const rows = await this.collection
      .find({ ...toQuery(org, options.filter), $text: { $search: [...new Set(terms)].join(' ') } })
      .project({ score: { $meta: 'textScore' } })
      .sort({ score: { $meta: 'textScore' } })
      .limit(options.limit)
      .toArray();
    return rows.map((row) => {
      const { score, ...rest } = row;
      return { doc: fromStored<T>(rest) as T, score: Number(score) };
    });
  }

  async findAcrossOrgs(filter: Filter, limit: number): Promise<(T & { org_id: OrgId })[]> {
    const rows = await this.collection.find(toQuery(null, filter)).sort({ _id: 1 }).limit(limit).toArray();
    return rows.map((row) => ({ ...(fromStored<T>(row) as T), org_id: row['org_id'] as OrgId }));
  }
}

export class MongoMetadataStore implements MetadataStore {
  readonly engine = 'mongodb';

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  static async connect(url: string, options: { serverSelectionTimeoutMS?: number } = {}): Promise<MongoMetadataStore> {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5000 });
    await client.connect();
    return new MongoMetadataStore(client, client.db());
  }

  private async open<T extends StoredFields>(spec: CollectionSpec): Promise<MongoCollection<T>> {
    const collection = new MongoCollection<T>(this.db.collection(spec.name), spec);
    await collection.ensureIndexes();
    return collection;
  }

  async orgCollection<T extends StoredFields>(spec: CollectionSpec & { scope: 'org' }): Promise<OrgCollection<T>> {
    const c = await this.open<T>(spec);
    return {
      spec,
      insert: (org, doc) => c.insert(org, doc),
      get: (org, id) => c.get(org, id),
      findOne: (org, filter) => c.findOne(org, filter),
      findAll: (org, filter) => c.findAll(org, filter),
      list: (org, options) => c.list(org, options),
      count: (org, filter) => c.count(org, filter),
      update: (org, id, patch) => c.update(org, id, patch),
      delete: (org, id) => c.delete(org, id),
      deleteWhere: (org, filter) => c.deleteWhere(org, filter),
      search: (org, query, options) => c.search(org, query, options),
      findAcrossOrgs: (filter, limit) => c.findAcrossOrgs(filter, limit),
      // other service instances may write the same database: no exact revision
      revision: () => null,
    };
  }

  async globalCollection<T extends StoredFields>(spec: CollectionSpec & { scope: 'global' }): Promise<GlobalCollection<T>> {
    const c = await this.open<T>(spec);
    return {
      spec,
      insert: (doc) => c.insert(GLOBAL_ORG, doc),
      get: (id) => c.get(GLOBAL_ORG, id),
      findOne: (filter) => c.findOne(GLOBAL_ORG, filter),
      findAll: (filter) => c.findAll(GLOBAL_ORG, filter),
      update: (id, patch) => c.update(GLOBAL_ORG, id, patch),
      delete: (id) => c.delete(GLOBAL_ORG, id),
    };
  }

  /** every write is acknowledged by the server only once it is applied */
  committed(): null {
    return null;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
