/**
 * A fake of the OpenAI Realtime API: `wss://127.0.0.1:<port>/v1/realtime?model=...`
 * with TLS from a certificate made here (node-forge, for 127.0.0.1), speaking
 * the real event names. It keeps what it received (the exact count of audio
 * bytes appended, every other client event), runs an energy VAD over the
 * audio when the session asks for `server_vad` (speech_started /
 * speech_stopped in audio time, then commit and an automatic response), and
 * answers each response from a script: a user transcript, an agent transcript
 * with PCM16 audio (paced like a real stream, or in one burst), or a function call.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { WebSocketServer, type WebSocket } from 'ws';

export interface ScriptedTurn {
  /** what the fake "heard" (the user transcript of the turn) */
  readonly heard?: string;
  /** the agent's answer: transcript and this much audio */
  readonly reply?: string;
  readonly audioMs?: number;
  /** ms between 20 ms audio chunks; 0 = all at once. @default 0 */
  readonly paceMs?: number;
  /** instead of speaking: a function call */
  readonly functionCall?: { readonly name: string; readonly arguments: Record<string, unknown> };
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number };
}

export interface FakeRealtime {
  readonly baseUrl: string;
  /** the certificate (PEM) to trust: VOICE_PROVIDER_CA_FILE */
  readonly caFile: string;
  readonly script: ScriptedTurn[];
  /** every event received, audio payloads replaced by their byte count */
  readonly received: Record<string, unknown>[];
  /** audio bytes appended (decoded), per connection, in order */
  readonly appendedBytes: number[];
  /** audio bytes sent in response.output_audio.delta, all connections */
  readonly sentAudioBytes: () => number;
  /** when the first audio delta of the latest response was sent (performance.now()) */
  readonly lastFirstAudioAt: () => number | null;
  readonly connections: () => number;
  /** the Authorization header and URL of each connection */
  readonly handshakes: { authorization: string | undefined; url: string }[];
  stop(): Promise<void>;
}

const VAD_WINDOW_SAMPLES = 480; // 20 ms at 24 kHz
const VAD_RMS = 600;

function selfSigned(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: '127.0.0.1' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
  ]);
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { key: keyPem, cert: forge.pki.certificateToPem(cert) };
}

/** a 440 Hz tone, PCM16 24 kHz */
export function tone(ms: number): Buffer {
  const samples = Math.round(ms * 24);
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
  return out;
}

export async function startFakeRealtime(): Promise<FakeRealtime> {
  const dir = mkdtempSync(join(tmpdir(), 'fake-realtime-'));
  const { key, cert } = selfSigned();
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert);
  const server: Server = createServer({ key, cert });
  const wss = new WebSocketServer({ server, path: '/v1/realtime' });
  const script: ScriptedTurn[] = [];
  const received: Record<string, unknown>[] = [];
  const appendedBytes: number[] = [];
  const handshakes: { authorization: string | undefined; url: string }[] = [];
  let sentAudio = 0;
  let firstAudioAt: number | null = null;
  let connections = 0;
  let counter = 0;
  const sockets = new Set<WebSocket>();

  wss.on('connection', (socket, request) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    handshakes.push({ authorization: request.headers.authorization, url: request.url ?? '' });
    const connection = connections++;
    appendedBytes[connection] = 0;
    let vad: { threshold: number; silenceMs: number } | null = null;
    let speaking = false;
    let silentMs = 0;
    let carry = Buffer.alloc(0);
    let userItem: string | null = null;
    let active: { id: string; cancelled: boolean } | null = null;
    const send = (event: Record<string, unknown>): void => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ event_id: `evt_${++counter}`, ...event }));
    };
    send({ type: 'session.created', session: { id: `sess_${counter}`, type: 'realtime' } });

    const respond = async (instructions: string | undefined): Promise<void> => {
      const turn: ScriptedTurn = instructions !== undefined ? { reply: 'May I do that?', audioMs: 200 } : (script.shift() ?? { reply: 'OK.', audioMs: 200 });
      const responseId = `resp_${++counter}`;
      const itemId = `item_${++counter}`;
      const response = { id: responseId, cancelled: false };
      active = response;
      send({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
      if (userItem !== null && turn.heard !== undefined) {
        send({ type: 'conversation.item.input_audio_transcription.delta', item_id: userItem, content_index: 0, delta: turn.heard.slice(0, 3) });
        send({ type: 'conversation.item.input_audio_transcription.completed', item_id: userItem, content_index: 0, transcript: turn.heard });
        userItem = null;
      }
      if (turn.functionCall !== undefined) {
        send({
          type: 'response.function_call_arguments.done',
          response_id: responseId,
          item_id: itemId,
          output_index: 0,
          call_id: `call_${++counter}`,
          name: turn.functionCall.name,
          arguments: JSON.stringify(turn.functionCall.arguments),
        });
      } else {
        const audio = tone(turn.audioMs ?? 200);
        const reply = turn.reply ?? '';
        send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant' } });
        send({ type: 'response.output_audio_transcript.delta', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, delta: reply });
        const chunk = 960;
        for (let offset = 0; offset < audio.length && !response.cancelled; offset += chunk) {
          if (offset === 0) firstAudioAt = performance.now();
          const part = audio.subarray(offset, offset + chunk);
          sentAudio += part.length;
          send({
            type: 'response.output_audio.delta',
            response_id: responseId,
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            delta: part.toString('base64'),
          });
          if ((turn.paceMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, turn.paceMs));
        }
        if (!response.cancelled) send({ type: 'response.output_audio.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 });
        send({ type: 'response.output_audio_transcript.done', response_id: responseId, item_id: itemId, output_index: 0, content_index: 0, transcript: reply });
      }
      if (active === response) active = null;
      send({
        type: 'response.done',
        response: {
          id: responseId,
          object: 'realtime.response',
          status: response.cancelled ? 'cancelled' : 'completed',
          usage: { input_tokens: turn.usage?.input_tokens ?? 120, output_tokens: turn.usage?.output_tokens ?? 40, total_tokens: 160 },
        },
      });
    };

    const commit = (): void => {
      userItem = `item_${++counter}`;
      send({ type: 'input_audio_buffer.committed', item_id: userItem, previous_item_id: null });
    };

    const vadOver = (pcm: Buffer): void => {
      if (vad === null) return;
      let joined = carry.length > 0 ? Buffer.concat([carry, pcm]) : pcm;
      const windowBytes = VAD_WINDOW_SAMPLES * 2;
      while (joined.length >= windowBytes) {
        let sum = 0;
        for (let i = 0; i < VAD_WINDOW_SAMPLES; i++) {
          const sample = joined.readInt16LE(i * 2);
          sum += sample * sample;
        }
        const loud = Math.sqrt(sum / VAD_WINDOW_SAMPLES) > VAD_RMS * (vad.threshold / 0.5);
        joined = joined.subarray(windowBytes);
        if (loud && !speaking) {
          speaking = true;
          silentMs = 0;
          send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: `item_${counter + 1}` });
        } else if (speaking) {
          silentMs = loud ? 0 : silentMs + 20;
          if (silentMs >= vad.silenceMs) {
            speaking = false;
            send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 0, item_id: `item_${counter + 1}` });
            commit();
            void respond(undefined);
          }
        }
      }
      carry = Buffer.from(joined);
    };

    socket.on('message', (data) => {
      const event = JSON.parse((data as Buffer).toString('utf8')) as Record<string, any>;
      if (event['type'] === 'input_audio_buffer.append') {
        const pcm = Buffer.from(String(event['audio']), 'base64');
        appendedBytes[connection] = (appendedBytes[connection] ?? 0) + pcm.length;
        received.push({ type: event['type'], bytes: pcm.length });
        vadOver(pcm);
        return;
      }
      received.push(event);
      switch (event['type']) {
        case 'session.update': {
          const detection = event['session']?.audio?.input?.turn_detection;
          vad = detection?.type === 'server_vad' ? { threshold: detection.threshold, silenceMs: detection.silence_duration_ms } : null;
          send({ type: 'session.updated', session: event['session'] });
          return;
        }
        case 'input_audio_buffer.commit':
          commit();
          return;
        case 'response.create':
          void respond(event['response']?.instructions);
          return;
        case 'response.cancel':
          if (active !== null) active.cancelled = true;
          return;
        case 'conversation.item.truncate':
          send({ type: 'conversation.item.truncated', item_id: event['item_id'], content_index: 0, audio_end_ms: event['audio_end_ms'] });
          return;
        case 'conversation.item.create':
          send({ type: 'conversation.item.created', item: { ...event['item'], id: `item_${++counter}` } });
          return;
        default:
          return;
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    baseUrl: `https://127.0.0.1:${port}/v1`,
    caFile,
    script,
    received,
    appendedBytes,
    handshakes,
    sentAudioBytes: () => sentAudio,
    lastFirstAudioAt: () => firstAudioAt,
    connections: () => connections,
    stop: async () => {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
