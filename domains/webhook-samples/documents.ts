/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

/** A saved custom webhook sample (built-in ones live in domains/webhook-samples). */
export interface WebhookSampleDoc extends StoredFields {
  readonly name: string;
  readonly description: string;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly created_by: string;
}
