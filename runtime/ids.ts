import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

/**
 * A new id `<prefix>_<ULID>`. ULIDs are monotonic within the process and sort by
 * creation time, which keyset pagination relies on (ids of one collection share
 * a prefix, so string order = creation order).
 */
export function newId(prefix: string): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

// wall clock: the store's own created_at / updated_at stamps (records of when, not decisions)
export const nowIso = (): string => new Date().toISOString();
