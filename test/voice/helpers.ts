/**
 * Voice suites' tools: real speech from `espeak-ng` (22,050 Hz WAV on stdout,
 * resampled linearly to PCM16 24 kHz), 20 ms framing, and a WebSocket client
 * of a voice session that keeps every JSON event and audio frame in order.
 */
import { spawnSync } from 'node:child_process';
import WebSocket from 'ws';
import { encodeG711 } from '../../runtime/voice/audio.js';
import { eventually } from '../helpers/eventually.js';

/** whether espeak-ng is installed (the suites print a SKIP line otherwise) */
export const espeakAvailable = (): boolean => spawnSync('espeak-ng', ['--version']).status === 0;

/** an utterance as PCM16 mono 24 kHz, followed by `silenceMs` of silence (so a VAD hears its end) */
export function speech(text: string, silenceMs = 800): Buffer {
  const wav = spawnSync('espeak-ng', ['--stdout', text], { maxBuffer: 64 * 1024 * 1024 });
  if (wav.status !== 0) throw new Error(`espeak-ng failed: ${String(wav.stderr)}`);
  const { samples, rate } = readWav(wav.stdout);
  const resampled = resample(samples, rate, 24000);
  const out = Buffer.alloc((resampled.length + silenceMs * 24) * 2);
  for (let i = 0; i < resampled.length; i++) out.writeInt16LE(resampled[i] as number, i * 2);
  return out;
}

function readWav(bytes: Buffer): { samples: Int16Array; rate: number } {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let rate = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    let size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') rate = bytes.readUInt32LE(offset + 12);
    if (id === 'data') {
      // espeak-ng writing to a pipe cannot seek back: its data size is a placeholder
      if (size === 0 || size === 0xffffffff || offset + 8 + size > bytes.length) size = bytes.length - offset - 8;
      const data = bytes.subarray(offset + 8, offset + 8 + size - (size % 2));
      const samples = new Int16Array(data.length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      return { samples, rate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

function resample(samples: Int16Array, from: number, to: number): Int16Array {
  const length = Math.floor((samples.length * to) / from);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const position = (i * from) / to;
    const index = Math.floor(position);
    const a = samples[index] ?? 0;
    const b = samples[index + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (position - index));
  }
  return out;
}

/** PCM16 24 kHz -> G.711 µ-law 8 kHz (every third sample) */
export function toUlaw(pcm: Buffer): Buffer {
  const samples = new Int16Array(Math.floor(pcm.length / 6));
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 6);
  return Buffer.from(encodeG711(samples, 'ulaw'));
}

/** splits audio into frames of `bytes` (the last one may be shorter) */
function frames(audio: Buffer, bytes: number): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += bytes) out.push(audio.subarray(offset, offset + bytes));
  return out;
}

type VoiceEvent = { type: string } & Record<string, any>;

export interface VoiceClient {
  readonly socket: WebSocket;
  readonly events: VoiceEvent[];
  readonly audio: Buffer[];
  audioBytes(): number;
  send(frame: Record<string, unknown>): void;
  sendAudio(audio: Buffer, frameBytes: number): void;
  /** waits for an event matching, returns it */
  waitFor(match: (event: VoiceEvent) => boolean, what: string): Promise<VoiceEvent>;
  closed: Promise<number>;
}

export async function connectVoice(wsUrl: string, token: string): Promise<VoiceClient> {
  const socket = new WebSocket(`${wsUrl}?token=${encodeURIComponent(token)}`);
  const events: VoiceEvent[] = [];
  const audio: Buffer[] = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('message', (data, isBinary) => {
    if (isBinary) audio.push(Buffer.from(data as Buffer));
    else events.push(JSON.parse((data as Buffer).toString('utf8')) as VoiceEvent);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
  });
  return {
    socket,
    events,
    audio,
    closed,
    audioBytes: () => audio.reduce((sum, frame) => sum + frame.length, 0),
    send: (frame) => socket.send(JSON.stringify(frame)),
    sendAudio: (pcm, frameBytes) => {
      for (const frame of frames(pcm, frameBytes)) socket.send(frame, { binary: true });
    },
    waitFor: (match, what) => eventually(() => events.find(match), { what, timeout: 15_000 }),
  };
}

/** the status an upgrade is refused with */
export function refusedUpgrade(url: string, protocols?: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
    socket.once('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += String(chunk)));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', () => {});
  });
}
