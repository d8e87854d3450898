/**
 * The stored side of one live voice session: its record (transcripts, tool calls,
 * metrics, usage, cost) kept in memory and written to the store in order, and,
 * with `record_audio`, the two audio streams written to the file store under
 * `voice/<session id>/`. Split from live-session.ts so the bridge there only
 * moves frames and events; everything that touches storage lives here.
 */
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import type { VoiceEndReason } from '../../actors/voice-session.machine.js';
import type { FileStore } from '../../runtime/files/store.js';
import { costUsd } from '../../runtime/llm/index.js';
import type { PriceTable } from '../../runtime/llm/prices.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { Collections } from '../collections.js';
import type { VoiceMetrics, VoiceSessionDoc, VoiceToolCall, VoiceTranscript } from './documents.js';

/** the last this many transcripts, tool calls and turn latencies are kept (a long session stays bounded) */
export const MAX_RECORDED_ITEMS = 2000;
const STAGED_WRITE_DELAY_MS = 100;
const MAX_TRANSCRIPT_CHARS = 20_000;

type RecordPatch = Partial<Omit<VoiceSessionDoc, 'id' | 'created_at' | 'updated_at'>>;

export interface SessionRecordDeps {
  readonly collections: Collections;
  readonly files: FileStore;
  readonly logger: Logger;
  readonly prices: PriceTable;
}

interface Recorders {
  readonly input: PassThrough;
  readonly output: PassThrough;
  readonly done: Promise<unknown>;
}

export class SessionRecord {
  private current: VoiceSessionDoc;
  private transcripts: VoiceTranscript[];
  private toolCalls: VoiceToolCall[];
  private metricsNow: VoiceMetrics;
  private usage: { input_tokens: number; output_tokens: number };
  private cost: number;
  /** once the session ended, only the final write goes to the store */
  private closed = false;
  private writes: Promise<unknown> = Promise.resolve();
  private staged: RecordPatch = {};
  private stagedTimer: NodeJS.Timeout | null = null;
  private readonly recorders: Recorders | null;

  constructor(
    private readonly deps: SessionRecordDeps,
    private readonly orgId: OrgId,
    doc: VoiceSessionDoc,
  ) {
    this.current = doc;
    this.transcripts = [...doc.transcripts];
    this.toolCalls = [...doc.tool_calls];
    this.metricsNow = doc.metrics;
    this.usage = { ...doc.usage };
    this.cost = doc.cost_usd;
    this.recorders = doc.record_audio ? this.startRecording() : null;
  }

  /** the record as last written (its settings do not change while the session runs) */
  get doc(): VoiceSessionDoc {
    return this.current;
  }

  get metrics(): VoiceMetrics {
    return this.metricsNow;
  }

  /** the USD spent by the session so far */
  get costUsd(): number {
    return this.cost;
  }

  /** changes the metrics in memory only: they are written with the next write (or staged by the caller) */
  updateMetrics(change: Partial<VoiceMetrics>): VoiceMetrics {
    this.metricsNow = { ...this.metricsNow, ...change };
    return this.metricsNow;
  }

  /** PCM16 24 kHz as sent to the provider */
  recordInput(pcm: Buffer): void {
    this.recorders?.input.write(pcm);
  }

  /** PCM16 24 kHz as the provider sent it */
  recordOutput(pcm: Buffer): void {
    this.recorders?.output.write(pcm);
  }

  addTranscript(entry: VoiceTranscript): void {
    const text = entry.text.length > MAX_TRANSCRIPT_CHARS ? entry.text.slice(0, MAX_TRANSCRIPT_CHARS) : entry.text;
    this.transcripts = [...this.transcripts, { ...entry, text }].slice(-MAX_RECORDED_ITEMS);
    this.persist({ transcripts: this.transcripts });
  }

  /** adds a response's tokens and their cost */
  addUsage(usage: { input_tokens?: number; output_tokens?: number } | undefined): void {
    const input = usage?.input_tokens ?? 0;
    const output = usage?.output_tokens ?? 0;
    this.usage = { input_tokens: this.usage.input_tokens + input, output_tokens: this.usage.output_tokens + output };
    this.cost += costUsd(this.current.model, { input_tokens: input, output_tokens: output }, this.deps.prices);
    this.persist({ usage: this.usage, cost_usd: this.cost });
  }

  /** the tool call as recorded, or a blank one (a call not seen yet) */
  callOf(callId: string, at: string): VoiceToolCall {
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

  /** kept in memory even after the session closed, so the final write carries the last decision */
  upsertCall(call: VoiceToolCall): void {
    const index = this.toolCalls.findIndex((existing) => existing.call_id === call.call_id);
    if (index === -1) this.toolCalls = [...this.toolCalls, call].slice(-MAX_RECORDED_ITEMS);
    else this.toolCalls = this.toolCalls.map((existing, i) => (i === index ? call : existing));
    this.persist({ tool_calls: this.toolCalls });
  }

  /** whether an approval with this id was asked during the session */
  hasApproval(approvalId: string): boolean {
    return this.toolCalls.some((call) => call.approval?.id === approvalId);
  }

  /**
   * A change written a little later (state, metrics): kept off the audio path, where a
   * synchronous store write would delay the frame the client is about to read.
   */
  stage(patch: RecordPatch): void {
    this.staged = { ...this.staged, ...patch };
    this.stagedTimer ??= setTimeout(() => {
      this.stagedTimer = null;
      this.persist({});
    }, STAGED_WRITE_DELAY_MS);
  }

  /** stops the writes as the session goes (in-memory changes still count for the final write) */
  close(): void {
    this.closed = true;
    clearTimeout(this.stagedTimer ?? undefined);
  }

  /** ends the audio files and writes the final record; `released` runs once that is done (or failed) */
  writeFinal(reason: VoiceEndReason, endedAt: string, released: () => void): void {
    this.close();
    const recorded = this.recorders;
    const id = this.current.id;
    this.writes = this.writes
      .then(async () => {
        recorded?.input.end();
        recorded?.output.end();
        const files = recorded === null ? [] : await recorded.done.then(() => [`voice/${id}/input.pcm`, `voice/${id}/output.pcm`]);
        await this.deps.collections.voiceSessions.update(this.orgId, id, {
          state: 'ended',
          end_reason: reason,
          ended_at: endedAt,
          transcripts: this.transcripts,
          tool_calls: this.toolCalls,
          metrics: this.metricsNow,
          usage: this.usage,
          cost_usd: this.cost,
          audio_files: files,
        });
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, session: id }, 'voice session record not written'))
      .finally(released);
  }

  /** settles once every write so far is done */
  settled(): Promise<unknown> {
    return this.writes;
  }

  /** writes in order, one after the other (with what was staged); a failure is logged and the session goes on */
  private persist(given: RecordPatch): void {
    if (this.closed) return;
    const patch = { ...this.staged, ...given };
    this.staged = {};
    if (Object.keys(patch).length === 0) return;
    const id = this.current.id;
    this.writes = this.writes
      .then(() => this.deps.collections.voiceSessions.update(this.orgId, id, patch))
      .then((doc) => {
        if (doc !== null) this.current = doc;
      })
      .catch((error: unknown) => this.deps.logger.error({ err: error, session: id }, 'voice session record not written'));
  }

  private startRecording(): Recorders {
    const id = this.current.id;
    const input = new PassThrough();
    const output = new PassThrough();
    const done = Promise.all([
      this.deps.files.write(this.orgId, `voice/${id}/input.pcm`, input),
      this.deps.files.write(this.orgId, `voice/${id}/output.pcm`, output),
    ]).catch((error: unknown) => this.deps.logger.error({ err: error, session: id }, 'voice session audio not recorded'));
    return { input, output, done };
  }
}
