/** What every service does with stored documents: unique-name conflicts, immutable fields, lookups. */
import { ServiceError } from '../errors.js';
import { UniqueViolation, type OrgCollection, type OrgId, type StoredFields } from './types.js';

/** Runs a store write; a unique violation becomes 409 `conflict` naming the field. */
export async function unique<T>(what: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UniqueViolation) {
      throw new ServiceError('conflict', `a ${what} with this ${error.fields.join(' and ')} already exists`, {
        fields: error.fields,
      });
    }
    throw error;
  }
}

/** 400 `immutable_field` when a patch changes a field fixed at creation (repeating the same value is fine). */
export function rejectImmutable(existing: object, patch: object, fields: readonly string[]): void {
  for (const field of fields) {
    const next = (patch as Record<string, unknown>)[field];
    if (next !== undefined && next !== (existing as Record<string, unknown>)[field]) {
      throw new ServiceError('immutable_field', `${field} cannot be changed after creation`, { field });
    }
  }
}

/** The document, or 404 (also for another organization's id). */
export async function getOr404<T extends StoredFields>(collection: OrgCollection<T>, org: OrgId, id: string, what: string): Promise<T> {
  const doc = await collection.get(org, id);
  if (!doc) throw new ServiceError('not_found', `${what} ${id} not found`);
  return doc;
}

export const stripUndefined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
