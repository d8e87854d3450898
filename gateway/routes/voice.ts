/**
 * /voice (feature `voice`): voice sessions (domains/voice). `POST
 * /voice/sessions` returns the session with a short-lived client token; the
 * audio goes over the WebSocket `/voice/sessions/:id/ws` (gateway/voice-sockets.ts),
 * which /openapi.json does not describe (README, Voice sessions). The record
 * (`GET /voice/sessions/:id`) holds the state, transcripts, tool calls,
 * metrics and cost.
 */
import { z } from 'zod';
import { VOICE_END_REASONS } from '../../actors/voice-session.machine.js';
import { VOICE_APPROVAL_VIA, VOICE_TOOL_CALL_STATUSES, type VoiceSessionDoc } from '../../domains/voice/documents.js';
import { AUDIO_FORMATS } from '../../runtime/voice/audio.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { publicBaseUrl } from '../public-url.js';
import { safeText } from '../safe-text.js';
import type { Services } from '../services.js';

const FORMAT = z.enum(AUDIO_FORMATS);
const TURN_DETECTION = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('server_vad'),
    threshold: z.number().min(0).max(1).default(0.5),
    prefix_padding_ms: z.number().int().min(0).max(5000).default(300),
    silence_duration_ms: z.number().int().min(50).max(10_000).default(500),
  }),
  z.strictObject({ type: z.literal('none') }),
]);
const STATES = ['created', 'connecting', 'listening', 'thinking', 'speaking', 'ended'] as const;

const sessionCreate = z.strictObject({
  agent: z.string().min(1).max(200).optional(),
  realm: z.string().min(1).max(100).optional(),
  instructions: safeText(z.string().trim().min(1).max(20_000)).optional(),
  voice: z
    .string()
    .regex(/^[a-z0-9_-]{1,40}$/, { message: 'a voice name: lowercase letters, digits, "_" or "-"' })
    .default('alloy'),
  input_audio_format: FORMAT.default('pcm16'),
  output_audio_format: FORMAT.default('pcm16'),
  turn_detection: TURN_DETECTION.default({ type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 }),
  max_duration_s: z.number().int().min(1).max(7200).default(1800),
  idle_timeout_s: z.number().int().min(1).max(3600).default(120),
  record_audio: z.boolean().default(false),
});

const turnDetectionSchema = z.union([
  z.object({ type: z.literal('server_vad'), threshold: z.number(), prefix_padding_ms: z.number(), silence_duration_ms: z.number() }),
  z.object({ type: z.literal('none') }),
]);
const sessionSchema = z.object({
  ...storedSchema,
  agent_id: z.string().nullable(),
  realm: z.string(),
  instructions: z.string(),
  voice: z.string(),
  input_audio_format: FORMAT,
  output_audio_format: FORMAT,
  turn_detection: turnDetectionSchema,
  max_duration_s: z.number(),
  idle_timeout_s: z.number(),
  record_audio: z.boolean(),
  model: z.string(),
  state: z.enum(STATES),
  end_reason: z.enum(VOICE_END_REASONS).nullable(),
  token_expires_at: z.string(),
  created_by: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  transcripts: z.array(
    z.object({ role: z.enum(['user', 'agent']), text: z.string(), item_id: z.string().nullable(), at: z.string(), interrupted: z.boolean().optional() }),
  ),
  tool_calls: z.array(
    z.object({
      call_id: z.string(),
      name: z.string(),
      arguments: z.unknown(),
      tool: z.string().nullable(),
      status: z.enum(VOICE_TOOL_CALL_STATUSES),
      result: z.unknown().optional(),
      error: z.object({ code: z.string(), message: z.string() }).optional(),
      approval: z
        .object({
          id: z.string(),
          status: z.enum(['pending', 'approved', 'denied']),
          decided_by: z.string().nullable(),
          via: z.enum(VOICE_APPROVAL_VIA).optional(),
        })
        .nullable(),
      at: z.string(),
    }),
  ),
  metrics: z.object({
    time_to_first_audio_ms: z.number().nullable(),
    turn_latency_ms: z.array(z.number()),
    input_audio_bytes: z.number(),
    output_audio_bytes: z.number(),
    barge_ins: z.number(),
  }),
  usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }),
  cost_usd: z.number(),
  audio_files: z.array(z.string()),
});
const createdSchema = sessionSchema.extend({ client_token: z.string(), expires_at: z.string(), ws_url: z.string() });
const sessionQuery = pageQuery.extend({ state: z.enum(STATES).optional() });
const approvalParams = z.object({ id: z.string().min(1).max(100), approval_id: z.string().min(1).max(100) });
const approvalBody = z.strictObject({ approved: z.boolean() });

const present = (doc: VoiceSessionDoc) => ({
  id: doc.id,
  agent_id: doc.agent_id,
  realm: doc.realm,
  instructions: doc.instructions,
  voice: doc.voice,
  input_audio_format: doc.input_audio_format,
  output_audio_format: doc.output_audio_format,
  turn_detection: doc.turn_detection,
  max_duration_s: doc.max_duration_s,
  idle_timeout_s: doc.idle_timeout_s,
  record_audio: doc.record_audio,
  model: doc.model,
  state: doc.state,
  end_reason: doc.end_reason,
  token_expires_at: doc.token_expires_at,
  created_by: doc.created_by,
  started_at: doc.started_at,
  ended_at: doc.ended_at,
  transcripts: doc.transcripts,
  tool_calls: doc.tool_calls,
  metrics: doc.metrics,
  usage: doc.usage,
  cost_usd: doc.cost_usd,
  audio_files: doc.audio_files,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
});

export function voiceRoutes({ voice, config }: Services): AnyRoute[] {
  const list = createPageResponder(voice.listing, present);
  return [
    route({
      tag: 'voice',
      auth: 'bearer',
      feature: 'voice',
      method: 'POST',
      path: '/voice/sessions',
      summary: 'Start a voice session: its record and a short-lived client token for the audio WebSocket (`ws_url`)',
      permission: 'voice:manage',
      body: sessionCreate,
      response: createdSchema,
      status: 201,
      creates: true,
      errors: [422, 429],
      handler: async ({ auth, body, request }) => {
        const { doc, token } = await voice.create(auth, body);
        const base = publicBaseUrl(config, request).replace(/^http/, 'ws');
        return {
          status: 201,
          json: { ...present(doc), client_token: token, expires_at: doc.token_expires_at, ws_url: `${base}/api/v1/voice/sessions/${doc.id}/ws` },
        };
      },
    }),
    route({
      tag: 'voice',
      auth: 'bearer',
      feature: 'voice',
      method: 'GET',
      path: '/voice/sessions',
      summary: 'List voice sessions, newest last (filter: state)',
      permission: 'voice:read',
      query: sessionQuery,
      response: pageSchema(sessionSchema),
      handler: async ({ auth, query }) => list(auth.orgId, query, query.state === undefined ? undefined : { state: query.state }),
    }),
    route({
      tag: 'voice',
      auth: 'bearer',
      feature: 'voice',
      method: 'GET',
      path: '/voice/sessions/:id',
      summary: "A voice session's record: state, transcripts, tool calls, metrics, cost",
      permission: 'voice:read',
      params: idParams,
      response: sessionSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await voice.get(auth.orgId, params.id)) }),
    }),
    route({
      tag: 'voice',
      auth: 'bearer',
      feature: 'voice',
      method: 'POST',
      path: '/voice/sessions/:id/end',
      summary: 'End a voice session (the client gets `ended`); an ended one is returned as it is',
      permission: 'voice:manage',
      params: idParams,
      response: sessionSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await voice.end(auth.orgId, params.id)) }),
    }),
    route({
      tag: 'voice',
      auth: 'bearer',
      feature: 'voice',
      method: 'POST',
      path: '/voice/sessions/:id/approvals/:approval_id',
      summary: "Answer a live session's approval (a write tool waiting); decided: 409",
      permission: 'voice:manage',
      audit: { action: 'decide' },
      params: approvalParams,
      body: approvalBody,
      response: sessionSchema,
      errors: [409],
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await voice.decide(auth, params.id, params.approval_id, body.approved)) }),
    }),
  ];
}
