/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

export interface RealmDoc extends StoredFields {
  readonly name: string;
  readonly display_name: string | null;
  readonly description: string | null;
  readonly color: string | null;
}
