/**
 * `npm run bench:voice`: the latency a voice session adds between the
 * provider's first `response.output_audio.delta` and the client's first audio
 * frame. The service, the fake realtime provider (wss:, test/fakes/realtime)
 * and the client run in this one process, so both instants are read from the
 * same `performance.now()`. Each turn is a manual commit answered by 100 ms
 * of audio. Baseline, measured in the same run: a bare relay (the `ws`
 * package, no service) that takes the same provider events over wss:, decodes
 * the base64 audio and forwards it as binary frames. Target: added p50 < 5 ms.
 * `--quick`: 60 turns each (300 otherwise).
 */
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { readFileSync } from 'node:fs';
import { startFakeRealtime, type FakeRealtime } from '../test/fakes/realtime/server.js';
import { startTestServer } from '../test/helpers/server.js';
import { QUICK, printSummary } from './lib.js';

const TURNS = QUICK ? 60 : 300;

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const round = (value: number): number => Math.round(value * 1000) / 1000;

/** a client that timestamps each turn's first audio frame and resolves when the turn's answer is complete */
function turnClient(socket: WebSocket, doneType: (text: Record<string, unknown>) => boolean) {
  let firstAudio: number | null = null;
  let done: (() => void) | null = null;
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      firstAudio ??= performance.now();
      return;
    }
    const event = JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>;
    if (doneType(event)) done?.();
  });
  return async (start: () => void): Promise<number> => {
    firstAudio = null;
    const finished = new Promise<void>((resolve) => (done = resolve));
    start();
    await finished;
    if (firstAudio === null) throw new Error('no audio in this turn');
    return firstAudio;
  };
}

async function throughService(fake: FakeRealtime): Promise<number[]> {
  const server = await startTestServer({
    SERVICE_FEATURES_VOICE: 'true',
    LLM_BASE_URL: fake.baseUrl,
    LLM_API_KEY: 'sk-bench',
    VOICE_PROVIDER_CA_FILE: fake.caFile,
  });
  try {
    const owner = await server.register('Bench');
    const created = await server.request('POST', '/voice/sessions', {
      token: owner.token,
      body: { turn_detection: { type: 'none' }, idle_timeout_s: 3600 },
    });
    const socket = new WebSocket(`${created.body.ws_url}?token=${created.body.client_token}`);
    let listening: (() => void) | null = null;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    socket.on('message', (data, isBinary) => {
      if (!isBinary && (data as Buffer).toString('utf8').includes('"listening"')) listening?.();
    });
    await ready;
    const turn = turnClient(socket, (event) => event['type'] === 'state_changed' && event['state'] === 'listening');
    const added: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      fake.script.push({ reply: 'ok', audioMs: 100 });
      const clientAt = await turn(() => socket.send(JSON.stringify({ type: 'commit' })));
      added.push(clientAt - (fake.lastFirstAudioAt() ?? Number.NaN));
    }
    socket.close();
    return added;
  } finally {
    await server.stop();
  }
}

/** the baseline: wss provider -> a bare relay -> the client, the same events and decoding */
async function throughBareRelay(fake: FakeRealtime): Promise<number[]> {
  const relay = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => relay.once('listening', () => resolve()));
  const ca = readFileSync(fake.caFile, 'utf8');
  relay.on('connection', (client) => {
    const upstream = new WebSocket(`${fake.baseUrl.replace('https', 'wss')}/realtime?model=bench`, { ca, headers: { authorization: 'Bearer sk-bench' } });
    upstream.on('message', (data) => {
      const event = JSON.parse((data as Buffer).toString('utf8')) as { type: string; delta?: string };
      if (event.type === 'response.output_audio.delta') client.send(Buffer.from(event.delta ?? '', 'base64'), { binary: true });
      else if (event.type === 'response.done') client.send(JSON.stringify({ type: 'done' }));
    });
    client.on('message', (data) => {
      if (upstream.readyState === upstream.OPEN) upstream.send((data as Buffer).toString('utf8'));
    });
    client.on('close', () => upstream.close());
  });
  const address = relay.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((resolve) => socket.once('open', () => resolve()));
  // the relay's upstream opens after the client's connection: wait for it before the first turn
  await new Promise((resolve) => setTimeout(resolve, 300));
  const turn = turnClient(socket, (event) => event['type'] === 'done');
  const added: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    fake.script.push({ reply: 'ok', audioMs: 100 });
    const clientAt = await turn(() => socket.send(JSON.stringify({ type: 'response.create' })));
    added.push(clientAt - (fake.lastFirstAudioAt() ?? Number.NaN));
  }
  socket.close();
  await new Promise<void>((resolve) => relay.close(() => resolve()));
  return added;
}

const fake = await startFakeRealtime();
try {
  const bare = await throughBareRelay(fake);
  const service = await throughService(fake);
  const summary = {
    bench: 'voice',
    turns: TURNS,
    added_latency_p50_ms: round(percentile(service, 50)),
    added_latency_p99_ms: round(percentile(service, 99)),
    baseline_relay_p50_ms: round(percentile(bare, 50)),
    baseline_relay_p99_ms: round(percentile(bare, 99)),
    ratio_p50_vs_relay: round(percentile(service, 50) / percentile(bare, 50)),
    target_p50_ms: 5,
    meets_target: percentile(service, 50) < 5,
  };
  console.log(
    `voice: service p50 ${summary.added_latency_p50_ms} ms, p99 ${summary.added_latency_p99_ms} ms; bare relay p50 ${summary.baseline_relay_p50_ms} ms`,
  );
  printSummary(summary);
} finally {
  await fake.stop();
}
