/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

export interface SkillDoc extends StoredFields {
  readonly name: string;
  readonly slug: string;
  readonly description: string;
  readonly version: string;
  readonly tags: string[];
  readonly content: string;
  readonly scope: 'org' | 'user';
  /** the user a `user`-scoped skill belongs to */
  readonly owner_user_id: string | null;
  /** `org`, or the owner's user id: lets one `in` filter list what a caller may see */
  readonly visible_to: string;
  readonly status: SkillStatus;
  readonly created_by: string;
  /** who moved it to `pending_approval` last; the four-eyes rule compares the approver with it */
  readonly submitted_by: string | null;
  readonly reviewed_by: string | null;
  readonly reviewed_at: string | null;
  readonly review_note: string | null;
}

export type SkillStatus = 'draft' | 'pending_approval' | 'approved' | 'rejected';
