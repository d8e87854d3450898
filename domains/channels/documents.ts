/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

/** How a channel reaches its chat platform: pasted tokens today; OAuth and QR later add kinds. */
export interface ChannelConnection {
  readonly kind: 'tokens' | 'oauth' | 'qr';
  readonly status: 'connected' | 'failed';
  /** bot_token, signing_secret and app_token (when given) as JSON, sealed (AES-256-GCM); never returned */
  readonly credentials_sealed: string;
  readonly api_base_url: string | null;
  /** Socket Mode (an app token was given) instead of the Events URL */
  readonly socket_mode: boolean;
  readonly team_id: string | null;
  readonly bot_user_id: string | null;
  readonly bot_id: string | null;
  readonly scopes: string[];
  readonly connected_at: string;
}

/** A chat-platform channel integration (`service_channel`): where inbound messages come from and replies go. */
export interface ChannelDoc extends StoredFields {
  readonly channel_type: string;
  readonly display_name: string;
  readonly system_prompt: string | null;
  readonly source_ids: string[];
  readonly response_mode: 'disabled' | 'enabled' | 'agent';
  readonly is_active: boolean;
  readonly filter_config: Record<string, unknown> | null;
  readonly instance_name: string;
  readonly connection: ChannelConnection | null;
  readonly created_by: string;
}

/** A channel binding: which agent answers which messages of a channel, and how. */
export interface BindingDoc extends StoredFields {
  /** the agent as given (id or name) and its id */
  readonly agent: string;
  readonly agent_id: string;
  /** the channel record id (match_rule.channel), top level for the index */
  readonly channel_id: string;
  readonly match_rule: {
    readonly channel: string;
    /** the chat channel's name (no #); null: every chat channel of the integration */
    readonly slack_channel: string | null;
    readonly mentioned: boolean;
    readonly preserve_thread: boolean;
  };
  /** no write tool runs for this binding's runs */
  readonly read_only: boolean;
  /** `ask`: write tools wait for an approval posted in the thread */
  readonly approval_write: 'allow' | 'ask';
  /** answer messages of other bots (never the service's own) */
  readonly allow_bots: boolean;
  readonly enabled: boolean;
  readonly created_by: string;
}

/** An inbound chat event already taken (dedupe of retries and of app_mention + message for one post). */
export interface ChannelEventDoc extends StoredFields {
  readonly channel_id: string;
  /** `event:<event_id>` or `message:<chat channel>:<ts>` */
  readonly key: string;
  readonly received_at: string;
  /** UTC day received (YYYY-MM-DD): old keys are swept by day */
  readonly day: string;
}
