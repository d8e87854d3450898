/**
 * /channels: chat-platform channel integrations (`service_channel`). A channel
 * is created first, then connected by pasting its tokens
 * (`POST /channels/:id/connect`; OAuth and QR flows can add `connection.kind`s
 * later). Tokens are sealed at rest and never returned. The test action checks
 * the tokens and the bot's scopes; reload re-reads the channel into the runtime.
 */
import { z } from 'zod';
import { OPTIONAL_SCOPES, REQUIRED_SCOPES } from '../../domains/channels/slack-scopes.js';
import type { ChannelDoc } from '../../domains/channels/documents.js';
import { DEFAULT_RATE_LIMITS } from '../../domains/channels/rate-limiter.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import type { HttpRequest } from '../http.js';
import { publicBaseUrl } from '../public-url.js';

const CHANNEL_TYPES = ['slack'] as const;
const RESPONSE_MODES = ['disabled', 'enabled', 'agent'] as const;

const displayName = safeName(z.string().trim().min(1, { message: 'display_name must not be empty' }).max(200));
const sourceIds = z.array(z.string().min(1).max(100)).max(100);
const filterConfig = z.record(z.string(), z.unknown());

const channelCreate = z.strictObject({
  channel_type: z.enum(CHANNEL_TYPES, { message: `channel_type is one of ${CHANNEL_TYPES.join(', ')}` }),
  display_name: displayName,
  system_prompt: z.string().min(1).max(32_768).nullish(),
  source_ids: sourceIds.default([]),
  response_mode: z.enum(RESPONSE_MODES).default('agent'),
  is_active: z.boolean().default(true),
  filter_config: filterConfig.nullish(),
});
const channelPatch = z.strictObject({
  channel_type: z.string().optional(),
  display_name: displayName.optional(),
  system_prompt: z.string().min(1).max(32_768).nullable().optional(),
  source_ids: sourceIds.optional(),
  response_mode: z.enum(RESPONSE_MODES).optional(),
  is_active: z.boolean().optional(),
  filter_config: filterConfig.nullable().optional(),
});
const httpUrl = z.url({ protocol: /^https?$/, message: 'api_base_url is an http(s) URL' });
const connectBody = z.strictObject({
  bot_token: z.string().min(1).max(500),
  signing_secret: z.string().min(1).max(500),
  app_token: z.string().min(1).max(500).optional(),
  api_base_url: httpUrl.optional(),
});

const connectionSchema = z.object({
  kind: z.enum(['tokens', 'oauth', 'qr']),
  status: z.enum(['connected', 'failed']),
  socket_mode: z.boolean(),
  api_base_url: z.string().nullable(),
  team_id: z.string().nullable(),
  bot_user_id: z.string().nullable(),
  scopes: z.array(z.string()),
  connected_at: z.string(),
});
const channelSchema = z.object({
  ...storedSchema,
  channel_type: z.string(),
  display_name: z.string(),
  system_prompt: z.string().nullable(),
  source_ids: z.array(z.string()),
  response_mode: z.enum(RESPONSE_MODES),
  is_active: z.boolean(),
  filter_config: z.record(z.string(), z.unknown()).nullable(),
  instance_name: z.string(),
  connection: connectionSchema.nullable(),
  events_url: z.string(),
  interactivity_url: z.string(),
});

/** `baseUrl`: publicBaseUrl (gateway/public-url.ts); the request URLs are pasted into Slack's app settings as they are. */
const present = (channel: ChannelDoc, baseUrl: string) => ({
  id: channel.id,
  channel_type: channel.channel_type,
  display_name: channel.display_name,
  system_prompt: channel.system_prompt,
  source_ids: channel.source_ids,
  response_mode: channel.response_mode,
  is_active: channel.is_active,
  filter_config: channel.filter_config,
  instance_name: channel.instance_name,
  // credentials are never shown, not even sealed
  connection:
    channel.connection === null
      ? null
      : {
          kind: channel.connection.kind,
          status: channel.connection.status,
          socket_mode: channel.connection.socket_mode,
          api_base_url: channel.connection.api_base_url,
          team_id: channel.connection.team_id,
          bot_user_id: channel.connection.bot_user_id,
          scopes: channel.connection.scopes,
          connected_at: channel.connection.connected_at,
        },
  events_url: `${baseUrl}/api/v1/chat/incoming/${channel.channel_type}/${channel.id}`,
  interactivity_url: `${baseUrl}/api/v1/chat/incoming/${channel.channel_type}/${channel.id}/interactivity`,
  created_at: channel.created_at,
  updated_at: channel.updated_at,
});

export function channelRoutes({ channelService: channels, config }: Services): AnyRoute[] {
  const baseUrl = (request: HttpRequest): string => publicBaseUrl(config, request);
  // the cached pages hold absolute URLs: one responder per base URL (a few: PUBLIC_URL, or the hosts callers use)
  const listPages = new Map<string, ReturnType<typeof createPageResponder<ChannelDoc, ReturnType<typeof present>>>>();
  const listPage = (request: HttpRequest) => {
    const base = baseUrl(request);
    let responder = listPages.get(base);
    if (!responder) {
      if (listPages.size >= 8) listPages.clear();
      responder = createPageResponder(channels.listing, (channel: ChannelDoc) => present(channel, base));
      listPages.set(base, responder);
    }
    return responder;
  };

  return [
    route({
      method: 'GET',
      path: '/channels/catalog',
      tag: 'channels',
      summary: 'Channel types, how they connect, the scopes their bots need',
      auth: 'bearer',
      permission: 'binding:read',
      response: z.object({
        items: z.array(
          z.object({
            channel_type: z.string(),
            display_name: z.string(),
            connection_kinds: z.array(z.string()),
            connect_fields: z.record(z.string(), z.string()),
            required_scopes: z.array(z.string()),
            optional_scopes: z.array(z.string()),
            events: z.array(z.string()),
            default_rate_limits: z.record(z.string(), z.unknown()),
          }),
        ),
      }),
      handler: async () => ({
        status: 200,
        json: {
          items: [
            {
              channel_type: 'slack',
              display_name: 'Slack',
              connection_kinds: ['tokens'],
              connect_fields: {
                bot_token: 'bot user OAuth token (xoxb-...), required',
                signing_secret: 'the app signing secret, required: inbound requests are verified with it',
                app_token: 'app-level token (xapp-...) with connections:write, optional: Socket Mode instead of the Events URL',
                api_base_url: 'Slack-compatible Web API base, optional (default https://slack.com/api/)',
              },
              required_scopes: REQUIRED_SCOPES,
              optional_scopes: OPTIONAL_SCOPES,
              events: ['app_mention', 'message.channels'],
              default_rate_limits: DEFAULT_RATE_LIMITS,
            },
          ],
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/channels',
      tag: 'channels',
      summary: 'List channels',
      auth: 'bearer',
      permission: 'binding:read',
      query: pageQuery,
      response: pageSchema(channelSchema),
      handler: async ({ auth, query, request }) => listPage(request)(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/channels',
      tag: 'channels',
      summary: 'Create a channel (connect it afterwards)',
      auth: 'bearer',
      permission: 'binding:manage',
      body: channelCreate,
      response: channelSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body, request }) => {
        const channel = await channels.create(auth.orgId, auth.userId, body);
        return { status: 201, json: present(channel, baseUrl(request)) };
      },
    }),
    route({
      method: 'GET',
      path: '/channels/:id',
      tag: 'channels',
      summary: 'Get a channel',
      auth: 'bearer',
      permission: 'binding:read',
      params: idParams,
      response: channelSchema,
      handler: async ({ auth, params, request }) => ({
        status: 200,
        json: present(await channels.get(auth.orgId, params.id), baseUrl(request)),
      }),
    }),
    route({
      method: 'PATCH',
      path: '/channels/:id',
      tag: 'channels',
      summary: 'Change a channel (channel_type is immutable)',
      auth: 'bearer',
      permission: 'binding:manage',
      params: idParams,
      body: channelPatch,
      response: channelSchema,
      handler: async ({ auth, params, body, request }) => {
        const updated = await channels.update(auth.orgId, params.id, body);
        return { status: 200, json: present(updated, baseUrl(request)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/channels/:id',
      tag: 'channels',
      summary: 'Delete a channel and its bindings',
      auth: 'bearer',
      permission: 'binding:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await channels.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/channels/:id/connect',
      tag: 'channels',
      auth: 'bearer',
      permission: 'binding:manage',
      summary: 'Connect by pasting the bot token and signing secret (app_token: Socket Mode); tokens are checked with auth.test',
      params: idParams,
      body: connectBody,
      response: channelSchema.extend({ check: z.object({ ok: z.boolean(), message: z.string().nullable(), details: z.record(z.string(), z.unknown()) }) }),
      handler: async ({ auth, params, body, request }) => {
        const { channel, check } = await channels.connect(auth.orgId, params.id, body);
        return { status: 200, json: { ...present(channel, baseUrl(request)), check } };
      },
    }),
    route({
      method: 'POST',
      path: '/channels/:id/test',
      tag: 'channels',
      auth: 'bearer',
      permission: 'binding:read',
      summary: 'Check the stored tokens and the bot scopes (chat:write, channels:history; chat:write.public optional); 422 names what is missing',
      params: idParams,
      response: z.object({ ok: z.literal(true), details: z.record(z.string(), z.unknown()) }),
      handler: async ({ auth, params }) => {
        const check = await channels.test(auth.orgId, params.id);
        return { status: 200, json: { ok: true, details: check.details } };
      },
    }),
    route({
      method: 'POST',
      path: '/channels/:id/reload',
      tag: 'channels',
      auth: 'bearer',
      permission: 'binding:manage',
      summary: 'Re-read the channel and its bindings into the runtime (reconnects Socket Mode)',
      params: idParams,
      response: z.object({ reloaded: z.literal(true), bindings: z.number().int(), socket_mode: z.boolean() }),
      handler: async ({ auth, params }) => {
        const result = await channels.reload(auth.orgId, params.id);
        return { status: 200, json: { reloaded: true, ...result } };
      },
    }),
  ];
}
