/** The fields of a Slack message a tool returns (Slack's own objects carry far more). */
export interface SlackMessageSummary {
  readonly ts: string;
  readonly user: string | null;
  readonly bot_id: string | null;
  readonly text: string;
  readonly thread_ts: string | null;
  readonly reply_count: number;
}

interface SlackMessageLike {
  readonly ts?: string;
  readonly user?: string;
  readonly bot_id?: string;
  readonly text?: string;
  readonly thread_ts?: string;
  readonly reply_count?: number;
}

const summarizeMessage = (message: SlackMessageLike): SlackMessageSummary => ({
  ts: message.ts ?? '',
  user: message.user ?? null,
  bot_id: message.bot_id ?? null,
  text: message.text ?? '',
  thread_ts: message.thread_ts ?? null,
  reply_count: message.reply_count ?? 0,
});

/** A page of `conversations.history` / `conversations.replies`: the messages and the cursor of the next page (null at the end). */
export function messagePage(data: Readonly<Record<string, unknown>>): { messages: SlackMessageSummary[]; next_cursor: string | null } {
  const next = (data['response_metadata'] as { next_cursor?: string } | undefined)?.next_cursor;
  return {
    messages: ((data['messages'] as SlackMessageLike[] | undefined) ?? []).map(summarizeMessage),
    next_cursor: next === undefined || next === '' ? null : next,
  };
}

/** JSON Schema of a channel id argument, shared by the tools */
export const CHANNEL_ID_SCHEMA = {
  type: 'string',
  pattern: '^[CGD][A-Z0-9]{2,}$',
  description: 'the Slack channel id, e.g. C024BE91L (find_channel turns a #name into an id)',
} as const;
