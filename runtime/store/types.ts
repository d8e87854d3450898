/**
 * The metadata store contract. Two implementations (SQLite embedded default,
 * MongoDB via MONGODB_URL) run the same conformance suite
 * (test/conformance/metadata-store.conformance.ts).
 *
 * Documents live in named collections. An org-scoped collection can only be
 * reached through a method that takes the organization id: every query the
 * implementation builds filters on it, so a route cannot forget org isolation.
 */

export type OrgId = string & { readonly __brand: 'OrgId' };
export const asOrgId = (id: string): OrgId => id as OrgId;

/** Fields every stored document has. */
export interface StoredFields {
  readonly id: string;
  readonly created_at: string;
  readonly updated_at: string;
}

export type Scalar = string | number | boolean | null;

/** Equality on top-level fields; `{ in: [...] }` matches any of the values. */
export type Filter = Readonly<Record<string, Scalar | { readonly in: readonly Scalar[] }>>;

export interface CollectionSpec {
  /** lowercase snake_case; becomes the table / collection name */
  readonly name: string;
  /** prefix of generated ids, e.g. `rlm` -> `rlm_01J...` */
  readonly idPrefix: string;
  /** `org`: every operation takes an organization id. `global`: identity records (users, organizations). */
  readonly scope: 'org' | 'global';
  /** sets of top-level fields unique together (within the organization for org scope); a missing field never collides */
  readonly unique?: readonly (readonly string[])[];
  /** top-level fields queried by filter often enough to index */
  readonly indexes?: readonly string[];
  /** top-level string fields searched by `search()` */
  readonly text?: readonly string[];
}

export interface Page<T> {
  readonly items: T[];
  readonly total: number;
  /** id of the last item when more follow, else null */
  readonly nextAfter: string | null;
}

export interface ListOptions {
  readonly filter?: Filter;
  /** page size; the caller has validated it */
  readonly limit: number;
  /** exclusive lower bound on id (ids sort by creation time) */
  readonly after?: string | null;
  /**
   * Bounds on id that narrow the list and its total alike (the cursor, `after`,
   * narrows only the items): a time window over time-sorted ids.
   */
  readonly idRange?: IdRange;
}

/** `gte` inclusive, `lt` exclusive; either may be absent. */
export interface IdRange {
  readonly gte?: string;
  readonly lt?: string;
}

export interface SearchHit<T> {
  readonly doc: T;
  /** higher is better; comparable only within one result set */
  readonly score: number;
}

/** Thrown by insert/update when a unique constraint is hit. */
export class UniqueViolation extends Error {
  constructor(
    readonly collection: string,
    readonly fields: readonly string[],
  ) {
    super(`duplicate ${fields.join(', ')} in ${collection}`);
    this.name = 'UniqueViolation';
  }
}

/** A patch: `undefined` values remove the field. */
export type Patch<T> = { readonly [K in keyof T]?: T[K] | undefined };

/** Input of insert: the store fills id and timestamps unless given (id may be fixed by the caller). */
export type NewDoc<T extends StoredFields> = Omit<T, keyof StoredFields> & { readonly id?: string };

export interface OrgCollection<T extends StoredFields> {
  readonly spec: CollectionSpec;
  insert(org: OrgId, doc: NewDoc<T>): Promise<T>;
  get(org: OrgId, id: string): Promise<T | null>;
  findOne(org: OrgId, filter: Filter): Promise<T | null>;
  list(org: OrgId, options: ListOptions): Promise<Page<T>>;
  /** every match, for small bounded sets (roles of an org, ...) */
  findAll(org: OrgId, filter?: Filter): Promise<T[]>;
  count(org: OrgId, filter?: Filter): Promise<number>;
  /** returns the updated document, or null when absent in this organization */
  update(org: OrgId, id: string, patch: Patch<Omit<T, keyof StoredFields>>): Promise<T | null>;
  delete(org: OrgId, id: string): Promise<boolean>;
  deleteWhere(org: OrgId, filter: Filter): Promise<number>;
  /** full-text search on the spec's `text` fields (all terms optional, ranked) */
  search(org: OrgId, query: string, options: { readonly filter?: Filter; readonly limit: number }): Promise<SearchHit<T>[]>;
  /**
   * A number that changes whenever a document of this organization in this
   * collection is written, or null when the engine may be written by other
   * processes (MongoDB): read caches are exact only when it is a number.
   */
  revision(org: OrgId): number | null;
  /**
   * Lookup across organizations, for identity only (a user's memberships at
   * login, an API key by its hash). Routes never call it.
   */
  findAcrossOrgs(filter: Filter, limit: number): Promise<(T & { readonly org_id: OrgId })[]>;
}

export interface GlobalCollection<T extends StoredFields> {
  readonly spec: CollectionSpec;
  insert(doc: NewDoc<T>): Promise<T>;
  get(id: string): Promise<T | null>;
  findOne(filter: Filter): Promise<T | null>;
  findAll(filter?: Filter): Promise<T[]>;
  update(id: string, patch: Patch<Omit<T, keyof StoredFields>>): Promise<T | null>;
  delete(id: string): Promise<boolean>;
}

export interface MetadataStore {
  /** `sqlite` or `mongodb` */
  readonly engine: string;
  /** declares a collection; creates its table / indexes idempotently */
  orgCollection<T extends StoredFields>(spec: CollectionSpec & { readonly scope: 'org' }): Promise<OrgCollection<T>>;
  globalCollection<T extends StoredFields>(spec: CollectionSpec & { readonly scope: 'global' }): Promise<GlobalCollection<T>>;
  /**
   * Settles once every write made so far is durable; null when it already is.
   * An engine may answer a write before committing it (SQLite commits the
   * writes of one event-loop turn together): whatever acknowledges a write
   * outside the process (an HTTP response) waits for this first.
   */
  committed(): Promise<void> | null;
  /** throws when the engine does not answer */
  ping(): Promise<void>;
  close(): Promise<void>;
}
