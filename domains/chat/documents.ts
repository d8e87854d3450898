/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';
import type { TokenUsage } from '../../runtime/collections.js';

export interface ConversationDoc extends StoredFields {
  readonly title: string;
  /** the agent that answers (its config: system prompt, model, max_turns) */
  readonly agent_id: string | null;
  /** `approval_defaults.write` of the conversation's runs */
  readonly approval_write: 'allow' | 'ask';
  readonly created_by: string;
  readonly last_message_at: string | null;
}

type ChatMessageStatus = 'complete' | 'streaming' | 'failed' | 'cancelled';

export interface ChatMessageDoc extends StoredFields {
  readonly conversation_id: string;
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly status: ChatMessageStatus;
  /** the run that wrote an assistant message */
  readonly run_id: string | null;
  readonly finish_reason: string | null;
  readonly usage: TokenUsage | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly created_by: string;
}
