/**
 * One connected voice session: the bridge between the client's WebSocket
 * (binary audio in its format, JSON control frames and events) and the
 * provider's realtime connection (PCM16 24 kHz, JSON events), with the
 * session's actor (actors/voice-session.machine.ts) deciding the turn-taking.
 *
 * Tools are the catalog meta-tools, decided by the organization's policies
 * as an agent run's are; a write waits for a person's approval, asked aloud
 * (a response whose instructions put the question) and answered over REST,
 * the socket, or by the user's spoken yes or no. Transcripts, tool calls, metrics and cost are kept
 * on the session's record as they happen; the audio, with `record_audio`,
 * streams to the file store under `voice/<session id>/`.
 *
 * This file is the bridge and the turn-taking only: storage is in
 * session-record.ts, the tools and their approvals in session-tools.ts.
 */
import type { Logger } from 'pino';
import type { VoiceEndReason, VoiceState } from '../../actors/voice-session.machine.js';
import { isoAt } from '../../runtime/clock.js';
import type { FileStore } from '../../runtime/files/store.js';
import type { PriceTable } from '../../runtime/llm/prices.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ToolCatalog } from '../../runtime/tools/catalog.js';
import type { ToolCallGate } from '../../runtime/tools/tool-gate.js';
import { META_TOOL_DEFINITIONS } from '../../runtime/tools/meta-tools.js';
import { PCM16_BYTES_PER_MS, Transcoder } from '../../runtime/voice/audio.js';
import type { RealtimeClientEvent, RealtimeConnection, RealtimeServerEvent } from '../../runtime/voice/realtime.js';
import type { Collections } from '../collections.js';
import type { VoiceApprovalVia, VoiceSessionDoc, VoiceSessionState } from './documents.js';
import { MAX_RECORDED_ITEMS, SessionRecord } from './session-record.js';
import { VoiceToolRunner, type ApprovalAnswer, type VoiceApprovalObserver } from './session-tools.js';

// callers (service.ts) import the answer type from here, as before the split
export type { ApprovalAnswer } from './session-tools.js';

/** what the session sends its client: JSON events and binary audio */
export interface ClientChannel {
  sendJson(event: Record<string, unknown>): void;
  sendAudio(bytes: Buffer): void;
  /** closes after what was sent (the `ended` event) */
  close(code: number, reason: string): void;
}

/** a JSON frame from the client, already validated (gateway/voice-sockets.ts) */
export type ClientControl = { type: 'commit' } | { type: 'end' } | { type: 'approval'; approval_id: string; approved: boolean };

export interface LiveSessionDeps {
  readonly collections: Collections;
  readonly files: FileStore;
  readonly logger: Logger;
  readonly now: () => number;
  readonly prices: PriceTable;
  /** the policy gate of tool calls; null when feature `policies` is off */
  readonly policies: ToolCallGate | null;
  readonly approvals: VoiceApprovalObserver | null;
  /** sends an event to the session's actor (false once it ended) */
  readonly signal: (
    event: { type: 'READY' | 'SPEECH_STARTED' | 'TURN_ENDED' | 'AUDIO_STARTED' | 'RESPONSE_DONE' | 'ACTIVITY' } | { type: 'END'; reason: VoiceEndReason },
  ) => boolean;
  /** the session left the registry */
  readonly released: () => void;
}

export interface LiveSessionSetup {
  readonly catalog: ToolCatalog;
  /** the cap (USD a day) and what the organization spent under it before this session; null: no cap */
  readonly costCap: { readonly capUsd: number; readonly spentUsd: number } | null;
}

export class LiveVoiceSession {
  readonly id: string;
  readonly orgId: OrgId;
  private state: VoiceSessionState;
  private provider: RealtimeConnection | null = null;
  private readonly inbound: Transcoder;
  private readonly outbound: Transcoder;
  /** the record and the audio files: every write to storage goes through it */
  private readonly record: SessionRecord;
  /** the meta-tools and their approvals */
  private readonly tools: VoiceToolRunner;
  private ended = false;
  /** a response is under way at the provider: a new response.create waits for its response.done */
  private responseActive = false;
  private readonly queuedResponses: RealtimeClientEvent[] = [];
  /** the response whose audio is being played, for barge-in */
  private playing: { responseId: string | null; itemId: string; firstAt: number; sentMs: number } | null = null;
  /** responses cancelled by barge-in: their late deltas are dropped */
  private readonly cancelled = new Set<string>();
  private currentResponseId: string | null = null;
  private responseHadAudio = false;
  private turnEndedAt: number | null = null;

  constructor(
    private readonly deps: LiveSessionDeps,
    orgId: OrgId,
    doc: VoiceSessionDoc,
    private readonly client: ClientChannel,
    private readonly setup: LiveSessionSetup,
  ) {
    this.id = doc.id;
    this.orgId = orgId;
    this.state = doc.state;
    this.inbound = new Transcoder(doc.input_audio_format);
    this.outbound = new Transcoder(doc.output_audio_format);
    this.record = new SessionRecord(deps, orgId, doc);
    this.tools = new VoiceToolRunner({
      orgId,
      catalog: setup.catalog,
      policies: deps.policies,
      observer: deps.approvals,
      record: this.record,
      now: deps.now,
      isEnded: () => this.ended,
      sendClient: (event) => client.sendJson(event),
      sendProvider: (event) => this.send(event),
      requestResponse: (event) => this.requestResponse(event),
      activity: () => this.deps.signal({ type: 'ACTIVITY' }),
    });
  }

  /** the provider connection, once opened (the runtime opens it after the actor started) */
  attachProvider(connection: RealtimeConnection): void {
    this.provider = connection;
  }

  // ---- the provider ----

  /** the socket is open: configure the session (formats, turn detection, voice, tools) */
  providerOpened(): void {
    const { doc } = this.record;
    const turnDetection =
      doc.turn_detection.type === 'server_vad'
        ? {
            type: 'server_vad' as const,
            threshold: doc.turn_detection.threshold,
            prefix_padding_ms: doc.turn_detection.prefix_padding_ms,
            silence_duration_ms: doc.turn_detection.silence_duration_ms,
            create_response: true,
            interrupt_response: true,
          }
        : null;
    this.send({
      type: 'session.update',
      session: {
        type: 'realtime',
        model: doc.model,
        instructions: doc.instructions,
        output_modalities: ['audio'],
        audio: {
          input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: turnDetection, transcription: { model: 'gpt-4o-mini-transcribe' } },
          output: { format: { type: 'audio/pcm', rate: 24000 }, voice: doc.voice },
        },
        tools: META_TOOL_DEFINITIONS.map((tool) => ({
          type: 'function' as const,
          name: tool.name,
          description: tool.description,
          parameters: tool.input_schema,
        })),
        tool_choice: 'auto',
      },
    });
  }

  providerEvent(event: RealtimeServerEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'session.updated':
        if (this.state === 'connecting') this.deps.signal({ type: 'READY' });
        return;
      case 'input_audio_buffer.speech_started':
        this.deps.signal({ type: 'SPEECH_STARTED' });
        return;
      case 'input_audio_buffer.speech_stopped':
        this.turnEndedAt = this.deps.now();
        this.deps.signal({ type: 'TURN_ENDED' });
        return;
      case 'conversation.item.input_audio_transcription.delta':
        this.client.sendJson({ type: 'user_transcript', final: false, item_id: event.item_id, delta: event.delta ?? '' });
        return;
      case 'conversation.item.input_audio_transcription.completed':
        this.client.sendJson({ type: 'user_transcript', final: true, item_id: event.item_id, text: event.transcript });
        this.record.addTranscript({ role: 'user', text: event.transcript, item_id: event.item_id, at: isoAt(this.deps.now()) });
        // a waiting approval may be answered aloud
        this.tools.heard(event.transcript);
        return;
      case 'response.created':
        this.responseActive = true;
        this.currentResponseId = event.response.id ?? null;
        this.responseHadAudio = false;
        return;
      case 'response.output_audio.delta':
        return this.audioDelta(event.response_id, event.item_id, event.delta);
      case 'response.output_audio_transcript.delta':
        if (this.cancelled.has(event.response_id)) return;
        this.client.sendJson({ type: 'agent_transcript', final: false, item_id: event.item_id, delta: event.delta });
        return;
      case 'response.output_audio_transcript.done': {
        const interrupted = this.cancelled.has(event.response_id);
        this.client.sendJson({
          type: 'agent_transcript',
          final: true,
          item_id: event.item_id,
          text: event.transcript,
          ...(interrupted ? { interrupted } : {}),
        });
        this.record.addTranscript({
          role: 'agent',
          text: event.transcript,
          item_id: event.item_id,
          at: isoAt(this.deps.now()),
          ...(interrupted ? { interrupted } : {}),
        });
        return;
      }
      case 'response.function_call_arguments.done':
        void this.tools.run(event.call_id, event.name, event.arguments);
        return;
      case 'response.done':
        return this.responseDone(event.response.id ?? null, event.response.usage);
      case 'error':
        this.client.sendJson({ type: 'error', code: 'provider_error', message: event.error.message, provider_code: event.error.code ?? null });
        return;
      default:
        return;
    }
  }

  providerFailed(message: string): void {
    if (this.ended) return;
    this.client.sendJson({ type: 'error', code: 'provider_error', message });
    this.deps.signal({ type: 'END', reason: 'provider_error' });
  }

  providerClosed(): void {
    if (!this.ended) this.providerFailed('the provider closed the connection');
  }

  private audioDelta(responseId: string, itemId: string, delta: string): void {
    if (this.cancelled.has(responseId)) return;
    const pcm = Buffer.from(delta, 'base64');
    const now = this.deps.now();
    if (this.playing === null || this.playing.itemId !== itemId) {
      this.playing = { responseId, itemId, firstAt: now, sentMs: 0 };
    }
    this.playing.sentMs += pcm.length / PCM16_BYTES_PER_MS;
    const out = this.outbound.toClient(pcm);
    if (out.length > 0) this.client.sendAudio(out);
    this.record.recordOutput(pcm);
    const { metrics } = this.record;
    this.record.updateMetrics({ output_audio_bytes: metrics.output_audio_bytes + out.length });
    if (!this.responseHadAudio) {
      this.responseHadAudio = true;
      this.deps.signal({ type: 'AUDIO_STARTED' });
      if (this.turnEndedAt !== null) {
        const latency = now - this.turnEndedAt;
        this.turnEndedAt = null;
        const first = this.record.metrics.time_to_first_audio_ms ?? latency;
        const updated = this.record.updateMetrics({
          time_to_first_audio_ms: first,
          turn_latency_ms: [...this.record.metrics.turn_latency_ms, latency].slice(-MAX_RECORDED_ITEMS),
        });
        this.client.sendJson({ type: 'metrics', time_to_first_audio_ms: first, turn_latency_ms: latency });
        this.record.stage({ metrics: updated });
      }
    }
  }

  private responseDone(responseId: string | null, usage: { input_tokens?: number; output_tokens?: number } | undefined): void {
    this.responseActive = false;
    if (responseId !== null && responseId === this.currentResponseId) this.currentResponseId = null;
    if (this.playing !== null && this.playing.responseId === responseId) this.playing = null;
    this.record.addUsage(usage);
    this.deps.signal({ type: 'RESPONSE_DONE' });
    const cap = this.setup.costCap;
    if (cap !== null && cap.spentUsd + this.record.costUsd >= cap.capUsd) {
      this.client.sendJson({ type: 'error', code: 'cost_cap_exceeded', message: "the organization's daily LLM spend is reached" });
      this.deps.signal({ type: 'END', reason: 'cost_cap_exceeded' });
      return;
    }
    const next = this.queuedResponses.shift();
    if (next !== undefined) this.startResponse(next);
  }

  // ---- the client ----

  clientAudio(bytes: Buffer): void {
    if (this.ended || this.state === 'connecting') return;
    const pcm = this.inbound.toProvider(bytes);
    if (pcm.length === 0) return;
    this.record.updateMetrics({ input_audio_bytes: this.record.metrics.input_audio_bytes + bytes.length });
    this.record.recordInput(pcm);
    this.send({ type: 'input_audio_buffer.append', audio: pcm.toString('base64') });
  }

  clientControl(frame: ClientControl, userId: string | null): void {
    if (this.ended) return;
    if (frame.type === 'end') {
      this.deps.signal({ type: 'END', reason: 'client_ended' });
      return;
    }
    if (frame.type === 'approval') {
      const answer = this.decide(frame.approval_id, frame.approved, userId, 'socket');
      if (answer !== 'ok')
        this.client.sendJson({ type: 'error', code: answer === 'decided' ? 'conflict' : 'not_found', message: `approval ${frame.approval_id}: ${answer}` });
      return;
    }
    // a manual commit: the user's turn is over
    this.send({ type: 'input_audio_buffer.commit' });
    this.turnEndedAt = this.deps.now();
    this.deps.signal({ type: 'TURN_ENDED' });
    this.requestResponse({ type: 'response.create' });
  }

  clientClosed(): void {
    if (!this.ended) this.deps.signal({ type: 'END', reason: 'client_disconnected' });
  }

  /** answers a waiting approval (REST or socket) */
  decide(approvalId: string, approved: boolean, by: string | null, via: VoiceApprovalVia): ApprovalAnswer {
    return this.tools.decide(approvalId, approved, by, via);
  }

  // ---- the actor's effects ----

  announce(state: VoiceState): void {
    if (state === this.state) return;
    this.state = state;
    this.client.sendJson({ type: 'state_changed', state });
    if (state !== 'ended') this.record.stage({ state });
  }

  /** user speech while the agent speaks (or thinks): cancel the response, truncate what was not played */
  bargeIn(): void {
    const now = this.deps.now();
    if (this.responseActive) {
      if (this.currentResponseId !== null) this.cancelled.add(this.currentResponseId);
      this.send({ type: 'response.cancel' });
    }
    const playing = this.playing;
    this.playing = null;
    this.queuedResponses.length = 0;
    this.record.updateMetrics({ barge_ins: this.record.metrics.barge_ins + 1 });
    if (playing === null) return;
    if (playing.responseId !== null) this.cancelled.add(playing.responseId);
    // what the client has played: real time since its first audio, at most what was sent
    const audioEndMs = Math.max(0, Math.min(Math.floor(playing.sentMs), now - playing.firstAt));
    this.send({ type: 'conversation.item.truncate', item_id: playing.itemId, content_index: 0, audio_end_ms: audioEndMs });
    this.client.sendJson({ type: 'barge_in', item_id: playing.itemId, audio_end_ms: audioEndMs });
  }

  /** the actor reached `ended`: tell the client, close the provider, write the record */
  finish(reason: VoiceEndReason): void {
    if (this.ended) return;
    this.ended = true;
    // the record stops writing first: the approvals denied below only change it in memory
    this.record.close();
    this.tools.stop();
    this.provider?.close();
    this.client.sendJson({ type: 'ended', reason });
    this.client.close(1000, reason);
    this.record.writeFinal(reason, isoAt(this.deps.now()), () => this.deps.released());
  }

  /** settles once every write of the session so far is done */
  settled(): Promise<unknown> {
    return this.record.settled();
  }

  // ---- helpers ----

  private requestResponse(event: RealtimeClientEvent): void {
    if (this.responseActive) this.queuedResponses.push(event);
    else this.startResponse(event);
  }

  private startResponse(event: RealtimeClientEvent): void {
    // marked at once: a second request before `response.created` must wait too
    this.responseActive = true;
    this.send(event);
  }

  private send(event: RealtimeClientEvent): void {
    this.provider?.send(event);
  }
}
