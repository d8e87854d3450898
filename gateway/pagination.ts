/**
 * The pagination envelope: `items`, `next_cursor`, `total`; keyset cursors over time-sorted ids.
 *
 * Cursors are opaque and authenticated: `<payload>.<mac>` (base64url), the mac
 * an HMAC-SHA256 under a key derived from the server secret over the
 * organization, the route and the payload. A cursor edited, forged, or taken
 * from another organization or another list answers 400 `invalid_cursor`.
 * The pipeline attaches the request's cursor scope (key and binding) to the
 * parsed query object (`attachCursorScope`), and every cursor function reads it
 * from the query the handler already holds (pass that object, not a copy: a
 * spread drops the scope). Not an AsyncLocalStorage: on Node
 * 20 one active store turns on promise hooks for the whole process, which cost
 * a third of the HTTP edge's throughput (bench:http --quick 0.71 vs 1.16).
 */
import { z } from 'zod';
import { constantTimeEqual, hmacDigest } from '../runtime/crypto.js';
import { ServiceError } from '../runtime/errors.js';
import type { Filter, ListOptions, OrgCollection, OrgId, Page, StoredFields } from '../runtime/store/types.js';
import { jsonResponse, type HttpResponse } from './http.js';

const MAX_PAGE_SIZE = 200;
const DEFAULT_PAGE_SIZE = 50;

/**
 * A query integer written strictly in decimal digits, from `min` to `max`:
 * `0x10`, `1e1`, ` 5`, `-1` and `10.5` are refused rather than coerced.
 * Documented in /openapi.json as what it is to a client, an integer in range.
 */
export function decimalInteger(name: string, min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,15}$/, { message: `${name} is a whole number written in decimal digits` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `${name} is at least ${min}` })
        .max(max, { message: `${name} must be at most ${max}` }),
    )
    .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined });
}

/** A query flag: exactly `true` or `false` (not `1`, `yes` or `on`), documented as a boolean. */
export function queryFlag(name: string) {
  return z
    .enum(['true', 'false'], { message: `${name} is true or false` })
    .transform((value) => value === 'true')
    .meta({ type: 'boolean', enum: undefined });
}

export const pageQuery = z.object({
  limit: decimalInteger('limit', 1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: z.string().min(1).max(1024).optional(),
});
export type PageQuery = z.output<typeof pageQuery>;

const CURSOR_VERSION = 1;

interface CursorScope {
  readonly key: Uint8Array;
  /** what a cursor is bound to: the organization and the route it was issued on */
  readonly binding: string;
}

const CURSOR_SCOPE = Symbol('cursor scope');

/** What a handler's parsed query carries for its cursors (any object the pipeline parsed). */
export type ScopedQuery = object;

/** Binds the cursors of one request: signed with `key`, bound to `org` and `route` (e.g. `GET /api-keys`). */
export function attachCursorScope(query: unknown, key: Uint8Array, org: string, route: string): void {
  if (typeof query !== 'object' || query === null || Object.isFrozen(query)) return;
  Object.defineProperty(query, CURSOR_SCOPE, { value: { key, binding: `${org}\u0000${route}` } satisfies CursorScope, enumerable: false });
}

function scopeOf(query: ScopedQuery): CursorScope {
  const scope = (query as { [CURSOR_SCOPE]?: CursorScope })[CURSOR_SCOPE];
  // a programming error, not the caller's: cursors exist only for a query the pipeline parsed
  if (scope === undefined) throw new Error('pagination cursors are used without the request query that carries their scope');
  return scope;
}

// the payload is base64url and the binding holds no newline, so the message splits one way only
const macOf = (scope: CursorScope, payload: string): Buffer => hmacDigest('sha256', scope.key, `${scope.binding}\n${payload}`);

/** Opaque to clients; stable because it names the last id seen, not an offset. */
export function encodeCursor(query: ScopedQuery, lastId: string): string {
  const payload = Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: lastId })).toString('base64url');
  return `${payload}.${macOf(scopeOf(query), payload).toString('base64url')}`;
}

export function decodeCursor(query: ScopedQuery, cursor: string): string {
  const invalid = (): ServiceError => new ServiceError('invalid_cursor', 'cursor is not one this server issued for this list');
  const scope = scopeOf(query);
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw invalid();
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
  // checked on the raw bytes before the payload is parsed
  if (!constantTimeEqual(macOf(scope, payload), given)) throw invalid();
  try {
    const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (
      typeof decoded === 'object' &&
      decoded !== null &&
      'v' in decoded &&
      decoded.v === CURSOR_VERSION &&
      'after' in decoded &&
      typeof decoded.after === 'string'
    ) {
      return decoded.after;
    }
  } catch {
    // fall through to the error below
  }
  throw invalid();
}

export function listOptions(query: PageQuery, filter?: ListOptions['filter']): ListOptions {
  return { limit: query.limit, after: query.cursor === undefined ? null : decodeCursor(query, query.cursor), filter };
}

export interface PageEnvelope<T> {
  readonly items: T[];
  readonly next_cursor: string | null;
  readonly total: number;
}

export function pageEnvelope<T, R>(query: ScopedQuery, page: Page<T>, present: (item: T) => R): PageEnvelope<R> {
  return {
    items: page.items.map(present),
    next_cursor: page.nextAfter === null ? null : encodeCursor(query, page.nextAfter),
    total: page.total,
  };
}

/** Response schema of a collection, for /openapi.json. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable(), total: z.number().int() });
}

/** Pages kept per responder; past this the cache starts over (a hot list stays in it). */
const PAGE_CACHE_LIMIT = 2048;

/**
 * Answers a collection page as a response, reusing the serialized page while
 * the organization's documents of that collection are unchanged (the store's
 * revision). The output must depend only on the documents, the filter and the
 * page position. Engines without an exact revision (MongoDB) are never cached.
 */
export function createPageResponder<T extends StoredFields, R>(collection: Pick<OrgCollection<T>, 'list' | 'revision'>, present: (item: T) => R) {
  const cache = new Map<string, { readonly revision: number; readonly body: string }>();
  return async (org: OrgId, query: PageQuery, filter?: Filter): Promise<HttpResponse> => {
    const revision = collection.revision(org);
    // the serialized page holds a cursor bound to this route: the binding is part of the key
    const key = `${scopeOf(query).binding}\u0000${query.limit}\u0000${query.cursor ?? ''}\u0000${filter === undefined ? '' : JSON.stringify(filter)}`;
    const hit = revision === null ? undefined : cache.get(key);
    if (hit && hit.revision === revision) return jsonResponse(200, null, {}, hit.body);
    const body = JSON.stringify(pageEnvelope(query, await collection.list(org, listOptions(query, filter)), present));
    if (revision !== null) {
      if (cache.size >= PAGE_CACHE_LIMIT) cache.clear();
      cache.set(key, { revision, body });
    }
    return jsonResponse(200, null, {}, body);
  };
}
