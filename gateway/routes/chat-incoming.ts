/**
 * /chat/incoming/*: what chat platforms post to the service. Public routes:
 * the credential is the platform's request signature, checked on the raw
 * bytes by the channel runtime before anything is parsed. Events are
 * acknowledged at once; the agent works asynchronously.
 */
import { z } from 'zod';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** Slack reads only the status; the body says what the service did with the event */
const slackAnswer = z.union([z.object({ challenge: z.string() }), z.object({ ok: z.literal(true), status: z.string(), reason: z.string().optional() })]);

const channelParams = z.object({ channel_id: z.string().min(1).max(100) });

export function chatIncomingRoutes({ channels }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/chat/incoming/slack/:channel_id',
      tag: 'channels',
      auth: 'public',
      bodyKind: 'raw',
      summary: 'Slack Events API (signed with the channel signing secret): url_verification, message and app_mention events',
      params: channelParams,
      response: slackAnswer,
      errors: [401],
      handler: async ({ params, request }) => channels.handleSlackEvent(params.channel_id, request),
    }),
    route({
      method: 'POST',
      path: '/chat/incoming/slack/:channel_id/interactivity',
      tag: 'channels',
      auth: 'public',
      bodyKind: 'raw',
      summary: 'Slack interactivity (payload= form field, signed): approve / deny buttons of approval messages',
      params: channelParams,
      response: slackAnswer,
      errors: [401],
      handler: async ({ params, request }) => channels.handleSlackInteraction(params.channel_id, request),
    }),
  ];
}
