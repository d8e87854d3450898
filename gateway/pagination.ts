/** The pagination envelope: `items`, `next_cursor`, `total`; keyset cursors over time-sorted ids. */
import { z } from 'zod';
import { ServiceError } from '../runtime/errors.js';
import type { ListOptions, Page } from '../runtime/store/types.js';

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
