/**
 * One live voice session: `connecting` -> `listening` <-> `thinking` ->
 * `speaking` -> ... -> `ended` (the states LiveKit Agents and Pipecat expose).
 * The machine owns the turn-taking rules and the session's clocks, on the
 * supervisor's clock:
 *
 * - barge-in: user speech during `speaking` (or `thinking`) runs `bargeIn`
 *   (the runtime cancels the response and truncates what was not played);
 * - idle timeout: `listening` with no user activity for `idleMs` ends the session;
 * - maximum duration: `maxMs` after the start the session ends, whatever its state;
 * - the cost cap and the client's `end` arrive as `END` with their reason.
 *
 * Side effects are named here (`announce`, `bargeIn`, `finish`) and supplied
 * by domains/voice/live-session.ts.
 */
import { assign, setup } from 'xstate';

export type VoiceState = 'connecting' | 'listening' | 'thinking' | 'speaking' | 'ended';

export const VOICE_END_REASONS = [
  'client_ended',
  'ended_by_api',
  'idle_timeout',
  'max_duration',
  'cost_cap_exceeded',
  'provider_error',
  'client_disconnected',
  'shutdown',
  'interrupted',
] as const;
export type VoiceEndReason = (typeof VOICE_END_REASONS)[number];

export interface VoiceSessionInput {
  readonly orgId: string;
  readonly sessionId: string;
  /** no user activity in `listening` for this long ends the session */
  readonly idleMs: number;
  /** the session ends this long after it started */
  readonly maxMs: number;
}

interface VoiceSessionContext extends VoiceSessionInput {
  readonly endReason: VoiceEndReason | null;
}

export type VoiceSessionEvent =
  /** the provider accepted the session's configuration */
  | { type: 'READY' }
  /** the user started speaking (provider VAD) */
  | { type: 'SPEECH_STARTED' }
  /** the user's turn is over (VAD end of speech, or a manual commit) */
  | { type: 'TURN_ENDED' }
  /** the first audio of a response reached the client */
  | { type: 'AUDIO_STARTED' }
  /** the provider finished (or cancelled) a response */
  | { type: 'RESPONSE_DONE' }
  /** user activity that is not speech (a control frame): restarts the idle clock */
  | { type: 'ACTIVITY' }
  | { type: 'END'; reason: VoiceEndReason };

export const voiceSessionMachine = setup({
  types: {
    context: {} as VoiceSessionContext,
    input: {} as VoiceSessionInput,
    events: {} as VoiceSessionEvent,
  },
  actions: {
    // the runtime provides these (`.provide`)
    announce: (_, _params: { state: VoiceState }) => {},
    bargeIn: () => {},
    finish: (_, _params: { reason: VoiceEndReason }) => {},
  },
  delays: {
    idle: ({ context }) => context.idleMs,
    maxDuration: ({ context }) => context.maxMs,
  },
}).createMachine({
  id: 'voice_session',
  context: ({ input }) => ({ ...input, endReason: null }),
  initial: 'connecting',
  after: { maxDuration: { target: '.ended', actions: assign({ endReason: 'max_duration' }) } },
  on: { END: { target: '.ended', actions: assign({ endReason: ({ event }) => event.reason }) } },
  states: {
    connecting: {
      entry: { type: 'announce', params: { state: 'connecting' } },
      on: { READY: 'listening' },
    },
    listening: {
      entry: { type: 'announce', params: { state: 'listening' } },
      after: { idle: { target: 'ended', actions: assign({ endReason: 'idle_timeout' }) } },
      on: {
        SPEECH_STARTED: { target: 'listening', reenter: true },
        ACTIVITY: { target: 'listening', reenter: true },
        TURN_ENDED: 'thinking',
        // a response the provider started on its own (a spoken approval question, a tool result)
        AUDIO_STARTED: 'speaking',
      },
    },
    thinking: {
      entry: { type: 'announce', params: { state: 'thinking' } },
      on: {
        AUDIO_STARTED: 'speaking',
        RESPONSE_DONE: 'listening',
        SPEECH_STARTED: { target: 'listening', actions: 'bargeIn' },
      },
    },
    speaking: {
      entry: { type: 'announce', params: { state: 'speaking' } },
      on: {
        RESPONSE_DONE: 'listening',
        SPEECH_STARTED: { target: 'listening', actions: 'bargeIn' },
        TURN_ENDED: { target: 'thinking', actions: 'bargeIn' },
      },
    },
    ended: {
      type: 'final',
      entry: [
        { type: 'announce', params: { state: 'ended' } },
        { type: 'finish', params: ({ context }) => ({ reason: context.endReason ?? 'client_ended' }) },
      ],
    },
  },
});
