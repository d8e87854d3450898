/** The documents of voice sessions, as the metadata store keeps them (collection: domains/collections.ts). */
import type { VoiceEndReason, VoiceState } from '../../actors/voice-session.machine.js';
import type { StoredFields } from '../../runtime/store/types.js';
import type { AudioFormat } from '../../runtime/voice/audio.js';

type TurnDetection =
  | { readonly type: 'server_vad'; readonly threshold: number; readonly prefix_padding_ms: number; readonly silence_duration_ms: number }
  | { readonly type: 'none' };

/** `created`: the client has not connected yet */
export type VoiceSessionState = 'created' | VoiceState;

export interface VoiceTranscript {
  readonly role: 'user' | 'agent';
  readonly text: string;
  /** the provider's conversation item */
  readonly item_id: string | null;
  readonly at: string;
  /** an agent turn cut short by barge-in: only what was played before it */
  readonly interrupted?: boolean;
}

export const VOICE_TOOL_CALL_STATUSES = ['running', 'pending_approval', 'succeeded', 'failed', 'denied'] as const;
type VoiceToolCallStatus = (typeof VOICE_TOOL_CALL_STATUSES)[number];

/** how an approval was answered: REST, the socket's `approval` frame, the user's spoken answer, or denied as the session ended */
export const VOICE_APPROVAL_VIA = ['api', 'socket', 'speech', 'session_ended'] as const;
export type VoiceApprovalVia = (typeof VOICE_APPROVAL_VIA)[number];

interface VoiceApproval {
  readonly id: string;
  readonly status: 'pending' | 'approved' | 'denied';
  readonly decided_by: string | null;
  /** absent while pending (and on records written before it was kept) */
  readonly via?: VoiceApprovalVia;
}

export interface VoiceToolCall {
  /** the provider's call id */
  readonly call_id: string;
  /** the meta-tool called (`search_connector_tools`, `execute_connector_tool`) */
  readonly name: string;
  readonly arguments: unknown;
  /** the connector tool an execute names, once resolved */
  readonly tool: string | null;
  readonly status: VoiceToolCallStatus;
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly approval: VoiceApproval | null;
  readonly at: string;
}

export interface VoiceMetrics {
  /** from the end of the first user turn to the first audio of the answer */
  readonly time_to_first_audio_ms: number | null;
  /** the same for every turn, in order */
  readonly turn_latency_ms: readonly number[];
  readonly input_audio_bytes: number;
  readonly output_audio_bytes: number;
  readonly barge_ins: number;
}

export interface VoiceSessionDoc extends StoredFields {
  readonly agent_id: string | null;
  readonly realm: string;
  readonly instructions: string;
  readonly voice: string;
  readonly input_audio_format: AudioFormat;
  readonly output_audio_format: AudioFormat;
  readonly turn_detection: TurnDetection;
  readonly max_duration_s: number;
  readonly idle_timeout_s: number;
  readonly record_audio: boolean;
  readonly model: string;
  readonly state: VoiceSessionState;
  readonly end_reason: VoiceEndReason | null;
  /** sha256 of the client token: the token itself is shown once, at creation */
  readonly token_hash: string;
  readonly token_expires_at: string;
  readonly created_by: string;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  /** UTC day of creation: the daily cost cap sums a day's sessions */
  readonly day: string;
  readonly transcripts: readonly VoiceTranscript[];
  readonly tool_calls: readonly VoiceToolCall[];
  readonly metrics: VoiceMetrics;
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
  readonly cost_usd: number;
  /** file-store paths of the recorded audio (`record_audio`) */
  readonly audio_files: readonly string[];
}
