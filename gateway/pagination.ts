/** The pagination envelope: `items`, `next_cursor`, `total`; keyset cursors over time-sorted ids. */
import { z } from 'zod';
import { ServiceError } from '../runtime/errors.js';
import type { Filter, ListOptions, OrgCollection, OrgId, Page, StoredFields } from '../runtime/store/types.js';
import { jsonResponse, type HttpResponse } from './http.js';

export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

export const pageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE, { message: `limit must be at most ${MAX_PAGE_SIZE}` })
    .default(DEFAULT_PAGE_SIZE),
  cursor: z.string().min(1).max(512).optional(),
});
export type PageQuery = z.output<typeof pageQuery>;

const CURSOR_VERSION = 1;

/** Opaque to clients; stable because it names the last id seen, not an offset. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: lastId })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof decoded === 'object' && decoded !== null &&
      'v' in decoded && decoded.v === CURSOR_VERSION &&
      'after' in decoded && typeof decoded.after === 'string'
    ) {
      return decoded.after;
    }
  } catch {
    // fall through to the error below
  }
  throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
}

export function listOptions(query: PageQuery, filter?: ListOptions['filter']): ListOptions {
  return { limit: query.limit, after: query.cursor === undefined ? null : decodeCursor(query.cursor), filter };
}

export interface PageEnvelope<T> {
  readonly items: T[];
  readonly next_cursor: string | null;
  readonly total: number;
}

export function pageEnvelope<T, R>(page: Page<T>, present: (item: T) => R): PageEnvelope<R> {
  return {
    items: page.items.map(present),
    next_cursor: page.nextAfter === null ? null : encodeCursor(page.nextAfter),
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
export function createPageResponder<T extends StoredFields, R>(collection: OrgCollection<T>, present: (item: T) => R) {
  const cache = new Map<string, { readonly revision: number; readonly body: string }>();
  return async (org: OrgId, query: PageQuery, filter?: Filter): Promise<HttpResponse> => {
    const revision = collection.revision(org);
    const key = `${org}\u0000${query.limit}\u0000${query.cursor ?? ''}\u0000${filter === undefined ? '' : JSON.stringify(filter)}`;
    const hit = revision === null ? undefined : cache.get(key);
    if (hit && hit.revision === revision) return jsonResponse(200, null, {}, hit.body);
    const body = JSON.stringify(pageEnvelope(await collection.list(org, listOptions(query, filter)), present));
    if (revision !== null) {
      if (cache.size >= PAGE_CACHE_LIMIT) cache.clear();
      cache.set(key, { revision, body });
    }
    return jsonResponse(200, null, {}, body);
  };
}
