/**
 * One connected voice session: the bridge between the client's WebSocket
 * (binary audio in its format, JSON control frames and events) and the
 * provider's realtime connection (PCM16 24 kHz, JSON events), with the
 * session's actor (actors/voice-session.machine.ts) deciding the turn-taking.
 *
 * Tools are the catalog meta-tools; a write waits for a person's approval,
 * asked aloud (a response whose instructions put the question) and answered
 * over REST or the socket. Transcripts, tool calls, metrics and cost are kept
 * on the session's record as they happen; the audio, with `record_audio`,
 * streams to the file store under `voice/<session id>/`.
 */
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import type { VoiceEndReason, VoiceState } from '../../actors/voice-session.machine.js';
import { isoAt } from '../../runtime/clock.js';
import type { FileStore } from '../../runtime/files/store.js';
import { newId } from '../../runtime/ids.js';
import { costUsd } from '../../runtime/llm/index.js';
import type { PriceTable } from '../../runtime/llm/prices.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ToolCatalog } from '../../runtime/tools/catalog.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  META_TOOL_DEFINITIONS,
  resolveExecuteConnectorTool,
  runExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
} from '../../runtime/tools/meta-tools.js';
import { toolErrorBody, type ToolOutcome } from '../../runtime/tools/tool-result.js';
import { PCM16_BYTES_PER_MS, Transcoder } from '../../runtime/voice/audio.js';
import type { RealtimeClientEvent, RealtimeConnection, RealtimeServerEvent } from '../../runtime/voice/realtime.js';
import type { Collections } from '../collections.js';
import type { VoiceMetrics, VoiceSessionDoc, VoiceSessionState, VoiceToolCall, VoiceTranscript } from './documents.js';

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

const MAX_RECORDED_ITEMS = 2000;
const STAGED_WRITE_DELAY_MS = 100;

type RecordPatch = Partial<Omit<VoiceSessionDoc, 'id' | 'created_at' | 'updated_at'>>;
const MAX_TRANSCRIPT_CHARS = 20_000;

export type ApprovalAnswer = 'ok' | 'not_found' | 'decided';

interface PendingApproval {
  readonly callId: string;
  readonly resolve: (approved: boolean, by: string | null) => void;
}

export class LiveVoiceSession {
  readonly id: string;
  readonly orgId: OrgId;
  private doc: VoiceSessionDoc;
  private state: VoiceSessionState;
  private provider: RealtimeConnection | null = null;
  private readonly inbound: Transcoder;
  private readonly outbound: Transcoder;
  private readonly abort = new AbortController();
  private transcripts: VoiceTranscript[];
  private toolCalls: VoiceToolCall[];
  private metrics: VoiceMetrics;
  private usage: { input_tokens: number; output_tokens: number };
  private cost: number;
  private ended = false;
  private writes: Promise<unknown> = Promise.resolve();
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
  private readonly approvals = new Map<string, PendingApproval>();
  private readonly recorders: { input: PassThrough; output: PassThrough; done: Promise<unknown> } | null;
  private staged: RecordPatch = {};
  private stagedTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: LiveSessionDeps,
    orgId: OrgId,
    doc: VoiceSessionDoc,
    private readonly client: ClientChannel,
    private readonly setup: LiveSessionSetup,
  ) {
    this.id = doc.id;
    this.orgId = orgId;
    this.doc = doc;
    this.state = doc.state;
    this.inbound = new Transcoder(doc.input_audio_format);
    this.outbound = new Transcoder(doc.output_audio_format);
    this.transcripts = [...doc.transcripts];
    this.toolCalls = [...doc.tool_calls];
    this.metrics = doc.metrics;
    this.usage = { ...doc.usage };
    this.cost = doc.cost_usd;
    this.recorders = doc.record_audio ? this.startRecording() : null;
  }

  /** the provider connection, once opened (the runtime opens it after the actor started) */
  attachProvider(connection: RealtimeConnection): void {
    this.provider = connection;
  }

  // ---- the provider ----

  /** the socket is open: configure the session (formats, turn detection, voice, tools) */
  providerOpened(): void {
    const { doc } = this;
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
        this.addTranscript({ role: 'user', text: event.transcript, item_id: event.item_id, at: isoAt(this.deps.now()) });
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
        this.addTranscript({
          role: 'agent',
          text: event.transcript,
          item_id: event.item_id,
          at: isoAt(this.deps.now()),
          ...(interrupted ? { interrupted } : {}),
        });
        return;
      }
      case 'response.function_call_arguments.done':
        void this.toolCall(event.call_id, event.name, event.arguments);
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
    this.recorders?.output.write(pcm);
    this.metrics = { ...this.metrics, output_audio_bytes: this.metrics.output_audio_bytes + out.length };
    if (!this.responseHadAudio) {
      this.responseHadAudio = true;
      this.deps.signal({ type: 'AUDIO_STARTED' });
      if (this.turnEndedAt !== null) {
        const latency = now - this.turnEndedAt;
        this.turnEndedAt = null;
        const first = this.metrics.time_to_first_audio_ms ?? latency;
        this.metrics = {
          ...this.metrics,
          time_to_first_audio_ms: first,
          turn_latency_ms: [...this.metrics.turn_latency_ms, latency].slice(-MAX_RECORDED_ITEMS),
        };
        this.client.sendJson({ type: 'metrics', time_to_first_audio_ms: first, turn_latency_ms: latency });
        this.stage({ metrics: this.metrics });
      }
    }
  }

  private responseDone(responseId: string | null, usage: { input_tokens?: number; output_tokens?: number } | undefined): void {
    this.responseActive = false;
    if (responseId !== null && responseId === this.currentResponseId) this.currentResponseId = null;
    if (this.playing !== null && this.playing.responseId === responseId) this.playing = null;
    const input = usage?.input_tokens ?? 0;
    const output = usage?.output_tokens ?? 0;
    this.usage = { input_tokens: this.usage.input_tokens + input, output_tokens: this.usage.output_tokens + output };
    this.cost += costUsd(this.doc.model, { input_tokens: input, output_tokens: output }, this.deps.prices);
    this.persist({ usage: this.usage, cost_usd: this.cost });
    this.deps.signal({ type: 'RESPONSE_DONE' });
    const cap = this.setup.costCap;
    if (cap !== null && cap.spentUsd + this.cost >= cap.capUsd) {
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
    this.metrics = { ...this.metrics, input_audio_bytes: this.metrics.input_audio_bytes + bytes.length };
    this.recorders?.input.write(pcm);
    this.send({ type: 'input_audio_buffer.append', audio: pcm.toString('base64') });
  }

  clientControl(frame: ClientControl, userId: string | null): void {
    if (this.ended) return;
    if (frame.type === 'end') {
      this.deps.signal({ type: 'END', reason: 'client_ended' });
      return;
    }
    if (frame.type === 'approval') {
      const answer = this.decide(frame.approval_id, frame.approved, userId);
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
  decide(approvalId: string, approved: boolean, by: string | null): ApprovalAnswer {
    const pending = this.approvals.get(approvalId);
    if (pending === undefined) return this.toolCalls.some((call) => call.approval?.id === approvalId) ? 'decided' : 'not_found';
    this.approvals.delete(approvalId);
    pending.resolve(approved, by);
    return 'ok';
  }

  // ---- the actor's effects ----

  announce(state: VoiceState): void {
    if (state === this.state) return;
    this.state = state;
    this.client.sendJson({ type: 'state_changed', state });
    if (state !== 'ended') this.stage({ state });
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
    this.metrics = { ...this.metrics, barge_ins: this.metrics.barge_ins + 1 };
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
    clearTimeout(this.stagedTimer ?? undefined);
    this.abort.abort();
    for (const [, pending] of this.approvals) pending.resolve(false, null);
    this.approvals.clear();
    this.provider?.close();
    this.client.sendJson({ type: 'ended', reason });
    this.client.close(1000, reason);
    const recorded = this.recorders;
    const endedAt = isoAt(this.deps.now());
    this.writes = this.writes
      .then(async () => {
        recorded?.input.end();
        recorded?.output.end();
        const files = recorded === null ? [] : await recorded.done.then(() => [`voice/${this.id}/input.pcm`, `voice/${this.id}/output.pcm`]);
        await this.deps.collections.voiceSessions.update(this.orgId, this.id, {
          state: 'ended',
          end_reason: reason,
          ended_at: endedAt,
          transcripts: this.transcripts,
          tool_calls: this.toolCalls,
          metrics: this.metrics,
          usage: this.usage,
          cost_usd: this.cost,
          audio_files: files,
        });
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, session: this.id }, 'voice session record not written'))
      .finally(() => this.deps.released());
  }

  /** settles once every write of the session so far is done */
  settled(): Promise<unknown> {
    return this.writes;
  }

  // ---- tools ----

  private async toolCall(callId: string, name: string, argumentsJson: string): Promise<void> {
    let args: unknown;
    try {
      args = JSON.parse(argumentsJson);
    } catch {
      args = null;
    }
    const at = isoAt(this.deps.now());
    this.upsertCall({ call_id: callId, name, arguments: args, tool: null, status: 'running', approval: null, at });
    this.client.sendJson({ type: 'tool_call', call_id: callId, name, arguments: args, status: 'running' });
    let outcome: ToolOutcome;
    const { catalog } = this.setup;
    const ctx = { orgId: this.orgId, signal: this.abort.signal, actorId: this.doc.created_by, realm: this.doc.realm };
    if (args === null) outcome = { error: toolErrorBody('invalid_arguments', 'the arguments are not JSON') };
    else if (name === SEARCH_CONNECTOR_TOOLS) outcome = applySearchConnectorTools(catalog, args);
    else if (name === EXECUTE_CONNECTOR_TOOL) {
      const resolution = resolveExecuteConnectorTool(catalog, args);
      if (!resolution.ok) outcome = { error: resolution.error };
      else {
        this.upsertCall({ ...this.callOf(callId, at), tool: resolution.tool.name });
        const allowed = resolution.effect === 'write' ? await this.askApproval(callId, resolution.tool.name, resolution.args) : true;
        if (this.ended) return;
        outcome = allowed
          ? await runExecuteConnectorTool(catalog, resolution, ctx)
          : { error: toolErrorBody('approval_denied', 'a person did not allow this write: do not retry it; tell the user') };
      }
    } else outcome = { error: toolErrorBody('unknown_tool', `no tool named "${name}": call ${SEARCH_CONNECTOR_TOOLS} or ${EXECUTE_CONNECTOR_TOOL}`) };
    if (this.ended) return;
    const current = this.callOf(callId, at);
    const denied = 'error' in outcome && outcome.error.code === 'approval_denied';
    const status = 'result' in outcome ? 'succeeded' : denied ? 'denied' : 'failed';
    this.upsertCall({
      ...current,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: { code: outcome.error.code, message: outcome.error.message } }),
    });
    this.client.sendJson({
      type: 'tool_call',
      call_id: callId,
      name,
      tool: current.tool,
      status,
      ...('result' in outcome ? { result: outcome.result } : { error: outcome.error }),
    });
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: JSON.stringify(outcome) } });
    this.requestResponse({ type: 'response.create' });
  }

  private askApproval(callId: string, tool: string, args: Record<string, unknown>): Promise<boolean> {
    const approvalId = newId('vap');
    const at = this.callOf(callId, isoAt(this.deps.now()));
    this.upsertCall({ ...at, status: 'pending_approval', approval: { id: approvalId, status: 'pending', decided_by: null } });
    this.client.sendJson({ type: 'approval_required', approval_id: approvalId, call_id: callId, tool, arguments: args });
    // asked aloud: a response whose only job is the question
    this.requestResponse({
      type: 'response.create',
      response: {
        instructions: `Before running the tool ${tool}, ask the user in one short sentence whether you may do it (${summarize(args)}). They can answer yes or no; wait for their decision.`,
      },
    });
    return new Promise((resolve) => {
      this.approvals.set(approvalId, {
        callId,
        resolve: (approved, by) => {
          const call = this.callOf(callId, at.at);
          this.upsertCall({ ...call, approval: { id: approvalId, status: approved ? 'approved' : 'denied', decided_by: by } });
          this.deps.signal({ type: 'ACTIVITY' });
          resolve(approved);
        },
      });
    });
  }

  private callOf(callId: string, at: string): VoiceToolCall {
    return (
      this.toolCalls.find((call) => call.call_id === callId) ?? {
        call_id: callId,
        name: '',
        arguments: null,
        tool: null,
        status: 'running',
        approval: null,
        at,
      }
    );
  }

  private upsertCall(call: VoiceToolCall): void {
    const index = this.toolCalls.findIndex((existing) => existing.call_id === call.call_id);
    if (index === -1) this.toolCalls = [...this.toolCalls, call].slice(-MAX_RECORDED_ITEMS);
    else this.toolCalls = this.toolCalls.map((existing, i) => (i === index ? call : existing));
    this.persist({ tool_calls: this.toolCalls });
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

  private addTranscript(entry: VoiceTranscript): void {
    const text = entry.text.length > MAX_TRANSCRIPT_CHARS ? entry.text.slice(0, MAX_TRANSCRIPT_CHARS) : entry.text;
    this.transcripts = [...this.transcripts, { ...entry, text }].slice(-MAX_RECORDED_ITEMS);
    this.persist({ transcripts: this.transcripts });
  }

  /**
   * A change written a little later (state, metrics): kept off the audio path, where a
   * synchronous store write would delay the frame the client is about to read.
   */
  private stage(patch: RecordPatch): void {
    this.staged = { ...this.staged, ...patch };
    this.stagedTimer ??= setTimeout(() => {
      this.stagedTimer = null;
      this.persist({});
    }, STAGED_WRITE_DELAY_MS);
  }

  /** writes in order, one after the other (with what was staged); a failure is logged and the session goes on */
  private persist(given: RecordPatch): void {
    if (this.ended) return;
    const patch = { ...this.staged, ...given };
    this.staged = {};
    if (Object.keys(patch).length === 0) return;
    this.writes = this.writes
      .then(() => this.deps.collections.voiceSessions.update(this.orgId, this.id, patch))
      .then((doc) => {
        if (doc !== null) this.doc = doc;
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, session: this.id }, 'voice session record not written'));
  }

  private startRecording(): { input: PassThrough; output: PassThrough; done: Promise<unknown> } {
    const input = new PassThrough();
    const output = new PassThrough();
    const done = Promise.all([
      this.deps.files.write(this.orgId, `voice/${this.id}/input.pcm`, input),
      this.deps.files.write(this.orgId, `voice/${this.id}/output.pcm`, output),
    ]).catch((error: unknown) => this.deps.logger.error({ err: error, session: this.id }, 'voice session audio not recorded'));
    return { input, output, done };
  }
}

function summarize(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
