/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

export const MEMORY_KINDS = ['fact', 'guideline', 'preference', 'note'] as const;

export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** the largest memory text, in bytes of UTF-8, for the REST route and the `memory.store` tool alike */
export const MAX_MEMORY_TEXT_BYTES = 32 * 1024;

export interface MemoryDoc extends StoredFields {
  readonly kind: MemoryKind;
  /** the realm's name (immutable, so it never goes stale) */
  readonly realm: string;
  readonly text: string;
  readonly title: string | null;
  readonly tags: string[];
  /** 32-bit float in [0, 1] */
  readonly importance: number;
  readonly created_by: string;
}
