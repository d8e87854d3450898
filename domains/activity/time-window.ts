/**
 * Entries of the feed, the audit log and notifications take their time from
 * their id (a ULID: its first ten characters are the creation time in ms), so
 * a `since`/`until` window is an id range the store narrows in its index, and
 * the count (`total`) is exact.
 */
import { decodeTime, encodeTime } from 'ulid';
import { newId } from '../../runtime/ids.js';
import type { IdRange } from '../../runtime/store/types.js';

/** A new id with the time it carries, as ISO 8601. */
export function stampedId(prefix: string): { readonly id: string; readonly at: string } {
  const id = newId(prefix);
  return { id, at: new Date(decodeTime(id.slice(prefix.length + 1).toUpperCase())).toISOString() };
}

const boundAt = (prefix: string, ms: number): string => `${prefix}_${encodeTime(ms, 10).toLowerCase()}`;

/** The ids of entries made from `since` to `until` (both inclusive, ISO 8601), for `ListOptions.idRange`. */
export function idWindow(prefix: string, since: string | undefined, until: string | undefined): IdRange | undefined {
  if (since === undefined && until === undefined) return undefined;
  return {
    ...(since === undefined ? {} : { gte: boundAt(prefix, Math.max(0, Date.parse(since))) }),
    ...(until === undefined ? {} : { lt: boundAt(prefix, Date.parse(until) + 1) }),
  };
}
