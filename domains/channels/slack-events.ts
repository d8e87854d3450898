/**
 * The Slack Events API and interactivity bodies the service reads, as zod
 * schemas (Slack sends more fields; unknown ones pass through untouched).
 */
import { z } from 'zod';

export const urlVerificationSchema = z.object({ type: z.literal('url_verification'), challenge: z.string().max(500) });

const slackMessageEventSchema = z.object({
  type: z.enum(['message', 'app_mention']),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().default(''),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
});
export type SlackMessageEvent = z.output<typeof slackMessageEventSchema>;

export const eventCallbackSchema = z.object({
  type: z.literal('event_callback'),
  event_id: z.string().min(1),
  team_id: z.string().optional(),
  event: z.object({ type: z.string() }).loose(),
});
export type EventCallback = z.output<typeof eventCallbackSchema>;

export const slackEnvelopeSchema = z.union([urlVerificationSchema, eventCallbackSchema]);

export const blockActionsSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1) }),
  channel: z.object({ id: z.string().min(1) }).optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).loose().optional(),
  message: z.object({ ts: z.string(), thread_ts: z.string().optional() }).loose().optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() }).loose()).min(1),
});

/** Message subtypes that are a person (or bot) saying something; edits, joins, deletions are not. */
const SPOKEN_SUBTYPES = new Set(['thread_broadcast', 'file_share', 'bot_message']);

/** The message of an event callback, or null when it is not a new message worth routing. */
export function messageOf(callback: EventCallback): SlackMessageEvent | null {
  const parsed = slackMessageEventSchema.safeParse(callback.event);
  if (!parsed.success) return null;
  const event = parsed.data;
  if (event.subtype !== undefined && !SPOKEN_SUBTYPES.has(event.subtype)) return null;
  return event;
}
