/**
 * What runs need from the sources resource: the sources a run may see, with
 * their configs decrypted, ready for the tool catalog.
 */
import type { CatalogSource } from '../../runtime/tools/catalog.js';

export interface SourceDirectory {
  /** the organization's sources (only those in `ids` when given), config decrypted */
  catalogSources(orgId: string, ids: readonly string[] | null): Promise<CatalogSource[]>;
}
