/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

export interface SettingsDoc extends StoredFields {
  /** always true: makes the document a singleton per organization */
  readonly singleton: true;
  readonly llm_provider: 'openai' | 'anthropic' | null;
  readonly llm_model: string | null;
  readonly llm_base_url: string | null;
  /**
   * the organization's own key for its llm_base_url, sealed (runtime/llm/org-key.ts); never
   * shown. Absent on records written before it existed: read as null.
   */
  readonly llm_api_key_sealed?: string | null;
  readonly embedding_model: string | null;
  readonly auto_embed_on_ingest: boolean;
  readonly approval_timeout_secs: number;
  /** the Context Engine tier: `advanced` opens KQL over context tables. Absent on older records: read as basic */
  readonly context_tier?: 'basic' | 'advanced';
}
