/**
 * Voice sessions end to end: the real server, a client over the audio
 * WebSocket streaming real speech (espeak-ng) in 20 ms frames, and the fake
 * realtime provider over wss: with a certificate the test made (trusted
 * through VOICE_PROVIDER_CA_FILE). Server VAD and manual commit, µ-law,
 * barge-in truncation, the idle timeout, approvals over REST, the cost cap,
 * organization isolation, token refusals and a restart.
 */
import { describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/expect-status.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { useSuite } from '../helpers/suite.js';
import { startFakeRealtime, type FakeRealtime } from '../fakes/realtime/server.js';
import { connectVoice, espeakAvailable, refusedUpgrade, speech, toUlaw, type VoiceClient } from './helpers.js';

const hasEspeak = espeakAvailable();
if (!hasEspeak) console.log('SKIP test/voice: espeak-ng is not installed (apt-get install espeak-ng)');

const envOf = (fake: FakeRealtime): Record<string, string> => ({
  SERVICE_FEATURES_VOICE: 'true',
  LLM_BASE_URL: fake.baseUrl,
  LLM_API_KEY: 'sk-operator-test',
  VOICE_PROVIDER_CA_FILE: fake.caFile,
});

const ctx = useSuite(async (own) => {
  const fake = own(await startFakeRealtime());
  const server = own(await startTestServer(envOf(fake)));
  return {
    fake,
    server,
    alice: await server.register('Alice Inc'),
    bob: await server.register('Bob Ltd'),
    hello: hasEspeak ? speech('Hello, what is the weather today?') : Buffer.alloc(0),
  };
}, 60_000);

async function start(
  server: TestServer,
  session: Session,
  body: Record<string, unknown> = {},
): Promise<{ id: string; client: VoiceClient; token: string; wsUrl: string }> {
  const created = await server.request('POST', '/voice/sessions', { token: session.token, body });
  expectStatus(created, 201);
  const client = await connectVoice(created.body.ws_url, created.body.client_token);
  await client.waitFor((event) => event.type === 'state_changed' && event.state === 'listening', 'listening');
  return { id: created.body.id, client, token: created.body.client_token, wsUrl: created.body.ws_url };
}

const states = (client: VoiceClient): string[] => client.events.filter((event) => event.type === 'state_changed').map((event) => event.state as string);

describe.skipIf(!hasEspeak)('voice sessions', () => {
  it('streams speech in 20 ms frames with server VAD: the provider gets every byte, the client the events in order', async () => {
    const { server, alice, fake, hello } = ctx;
    fake.script.push({ heard: 'Hello, what is the weather today?', reply: 'It is sunny.', audioMs: 400 });
    const created = await server.request('POST', '/voice/sessions', {
      token: alice.token,
      body: {
        instructions: 'Be brief.',
        voice: 'verse',
        turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 400 },
      },
    });
    expectStatus(created, 201).toMatchObject({ state: 'created', voice: 'verse', input_audio_format: 'pcm16', model: 'gpt-realtime' });
    expect(created.body.client_token).toMatch(/^vst_/);
    expect(created.body.ws_url).toBe(`${server.url.replace(/^http/, 'ws')}/voice/sessions/${created.body.id}/ws`);
    const connectionsBefore = fake.connections();
    const client = await connectVoice(created.body.ws_url, created.body.client_token);
    await client.waitFor((event) => event.type === 'state_changed' && event.state === 'listening', 'listening');
    // the operator's key went to the operator's URL, with the configured model
    expect(fake.handshakes.at(-1)).toMatchObject({ authorization: 'Bearer sk-operator-test', url: '/v1/realtime?model=gpt-realtime' });
    const update = [...fake.received].reverse().find((event) => event['type'] === 'session.update') as any;
    expect(update.session).toMatchObject({ instructions: 'Be brief.', audio: { output: { voice: 'verse' } } });
    expect(update.session.tools.map((tool: { name: string }) => tool.name)).toEqual(['search_connector_tools', 'execute_connector_tool']);

    client.sendAudio(hello, 960);
    await client.waitFor((event) => event.type === 'agent_transcript' && event.final === true, 'the final agent transcript');
    // the last state, not the first `listening` (found as soon as `speaking` came)
    await client.waitFor(() => states(client).includes('speaking') && states(client).at(-1) === 'listening', 'listening again');
    expect(fake.appendedBytes[connectionsBefore]).toBe(hello.length);
    expect(states(client)).toEqual(['connecting', 'listening', 'thinking', 'speaking', 'listening']);
    const order = client.events.map((event) =>
      event.type === 'user_transcript' || event.type === 'agent_transcript' ? `${event.type}:${String(event.final)}` : event.type,
    );
    const firstIndex = (name: string): number => order.indexOf(name);
    expect(firstIndex('user_transcript:false')).toBeLessThan(firstIndex('user_transcript:true'));
    expect(firstIndex('user_transcript:true')).toBeLessThan(firstIndex('agent_transcript:true'));
    expect(firstIndex('metrics')).toBeGreaterThan(-1);
    expect(client.audioBytes()).toBe(400 * 48);
    const metrics = client.events.find((event) => event.type === 'metrics');
    expect(metrics).toMatchObject({ time_to_first_audio_ms: expect.any(Number), turn_latency_ms: expect.any(Number) });

    client.send({ type: 'end' });
    expect(await client.closed).toBe(1000);
    expect(client.events.at(-1)).toEqual({ type: 'ended', reason: 'client_ended' });
    const record = await eventually(async () => {
      const read = await server.request('GET', `/voice/sessions/${created.body.id}`, { token: alice.token });
      return read.body.state === 'ended' ? read : undefined;
    });
    expectStatus(record, 200).toMatchObject({
      end_reason: 'client_ended',
      transcripts: [
        { role: 'user', text: 'Hello, what is the weather today?' },
        { role: 'agent', text: 'It is sunny.' },
      ],
      metrics: { input_audio_bytes: hello.length, output_audio_bytes: 400 * 48, barge_ins: 0 },
      usage: { input_tokens: 120, output_tokens: 40 },
    });
    expect(record.body.cost_usd).toBeGreaterThan(0);
    expect(record.body).not.toHaveProperty('token_hash');
    const listed = await server.request('GET', '/voice/sessions?state=ended', { token: alice.token });
    expect(listed.body.items.map((item: { id: string }) => item.id)).toContain(created.body.id);
  });

  it('manual commit with G.711 µ-law: transcoded both ways, byte counts exact', async () => {
    const { server, alice, fake, hello } = ctx;
    fake.script.push({ heard: 'hello', reply: 'Hi there.', audioMs: 300 });
    const before = fake.connections();
    const { client } = await start(server, alice, { turn_detection: { type: 'none' }, input_audio_format: 'g711_ulaw', output_audio_format: 'g711_ulaw' });
    const ulaw = toUlaw(hello);
    client.sendAudio(ulaw, 160);
    await eventually(() => (fake.appendedBytes[before] === ulaw.length * 6 ? true : undefined), { what: 'every µ-law byte as 6 PCM16 bytes' });
    // no VAD: nothing happens until the client commits
    expect(fake.received.filter((event) => event['type'] === 'input_audio_buffer.commit')).toHaveLength(0);
    client.send({ type: 'commit' });
    await client.waitFor((event) => event.type === 'agent_transcript' && event.final === true, 'the answer');
    await eventually(() => (client.audioBytes() === (300 * 48) / 6 ? true : undefined), { what: 'the answer as µ-law at 8 kHz' });
    const kinds = fake.received.map((event) => event['type']);
    expect(kinds.lastIndexOf('input_audio_buffer.commit')).toBeLessThan(kinds.lastIndexOf('response.create'));
    expect(states(client)).toEqual(['connecting', 'listening', 'thinking', 'speaking', 'listening']);
    client.socket.close();
  });

  it('barge-in: user speech while the agent speaks cancels the response and truncates at what was played', async () => {
    const { server, alice, fake, hello } = ctx;
    fake.script.push({ heard: 'tell me a story', reply: 'Once upon a time, there was a very long story.', audioMs: 4000, paceMs: 20 });
    const { id, client } = await start(server, alice);
    client.sendAudio(hello, 960);
    await client.waitFor((event) => event.type === 'state_changed' && event.state === 'speaking', 'speaking');
    await eventually(() => (client.audio.length >= 5 ? true : undefined), { what: 'some audio played' });
    const partial = speech('stop');
    client.sendAudio(partial, 960);
    const bargeIn = await client.waitFor((event) => event.type === 'barge_in', 'the barge-in');
    const truncate = await eventually(() => fake.received.find((event) => event['type'] === 'conversation.item.truncate'), { what: 'the truncate' });
    expect(fake.received.some((event) => event['type'] === 'response.cancel')).toBe(true);
    expect(truncate).toMatchObject({ item_id: bargeIn.item_id, content_index: 0, audio_end_ms: bargeIn.audio_end_ms });
    expect(truncate['audio_end_ms']).toBeLessThan(4000);
    expect(states(client).slice(0, 5)).toEqual(['connecting', 'listening', 'thinking', 'speaking', 'listening']);
    await client.waitFor((event) => event.type === 'agent_transcript' && event.interrupted === true, 'the interrupted transcript');
    const record = await eventually(async () => {
      const read = await server.request('POST', `/voice/sessions/${id}/end`, { token: alice.token });
      return read.body.state === 'ended' ? read : undefined;
    });
    expect(record.body).toMatchObject({ end_reason: 'ended_by_api', metrics: { barge_ins: 1 } });
    expect(record.body.transcripts.filter((entry: { interrupted?: boolean }) => entry.interrupted === true)).toMatchObject([
      { role: 'agent', text: 'Once upon a time, there was a very long story.' },
    ]);
    expect(await client.closed).toBe(1000);
  });

  it('ends an idle session after idle_timeout_s', async () => {
    const { server, alice } = ctx;
    const { id, client } = await start(server, alice, { idle_timeout_s: 1 });
    const ended = await client.waitFor((event) => event.type === 'ended', 'ended');
    expect(ended.reason).toBe('idle_timeout');
    const record = await eventually(async () => {
      const read = await server.request('GET', `/voice/sessions/${id}`, { token: alice.token });
      return read.body.state === 'ended' ? read : undefined;
    });
    expect(record.body.end_reason).toBe('idle_timeout');
  });

  it('a write tool waits for an approval, asked aloud, answered over REST', async () => {
    const { server, alice, fake } = ctx;
    fake.script.push({
      heard: 'remember the gate code',
      functionCall: {
        name: 'execute_connector_tool',
        arguments: { tool: 'memory.store', arguments: { kind: 'fact', realm: 'default', text: 'The gate code is 4321.' } },
      },
    });
    fake.script.push({ reply: 'Saved.', audioMs: 100 });
    const { id, client } = await start(server, alice, { turn_detection: { type: 'none' } });
    client.send({ type: 'commit' });
    const asked = await client.waitFor((event) => event.type === 'approval_required', 'the approval');
    expect(asked).toMatchObject({ tool: 'memory.store', arguments: { text: 'The gate code is 4321.' } });
    // spoken as a question: a response whose instructions ask it
    const question = await eventually(
      () => fake.received.find((event) => event['type'] === 'response.create' && (event as any).response?.instructions !== undefined),
      {
        what: 'the spoken question',
      },
    );
    expect((question as any).response.instructions).toContain('memory.store');
    const pending = await server.request('GET', `/voice/sessions/${id}`, { token: alice.token });
    expect(pending.body.tool_calls[0]).toMatchObject({
      status: 'pending_approval',
      tool: 'memory.store',
      approval: { id: asked.approval_id, status: 'pending' },
    });
    // another organization cannot answer it
    const foreign = await server.request('POST', `/voice/sessions/${id}/approvals/${asked.approval_id}`, { token: ctx.bob.token, body: { approved: true } });
    expect(foreign.status).toBe(404);
    const unknown = await server.request('POST', `/voice/sessions/${id}/approvals/vap_nope`, { token: alice.token, body: { approved: true } });
    expect(unknown.status).toBe(404);
    const approved = await server.request('POST', `/voice/sessions/${id}/approvals/${asked.approval_id}`, { token: alice.token, body: { approved: true } });
    expectStatus(approved, 200);
    const done = await client.waitFor((event) => event.type === 'tool_call' && event.status === 'succeeded', 'the tool result');
    expect(done.tool).toBe('memory.store');
    const output = await eventually(() => fake.received.find((event) => event['type'] === 'conversation.item.create'), { what: 'the function output' });
    expect((output as any).item).toMatchObject({ type: 'function_call_output', call_id: asked.call_id });
    expect(JSON.parse((output as any).item.output)).toHaveProperty('result');
    const again = await server.request('POST', `/voice/sessions/${id}/approvals/${asked.approval_id}`, { token: alice.token, body: { approved: false } });
    expect(again.status).toBe(409);
    const record = await eventually(async () => {
      const read = await server.request('GET', `/voice/sessions/${id}`, { token: alice.token });
      return read.body.tool_calls[0]?.status === 'succeeded' ? read : undefined;
    });
    expect(record.body.tool_calls[0]).toMatchObject({ approval: { status: 'approved', decided_by: alice.user.id } });
    const memory = await server.request('GET', '/memory', { token: alice.token });
    expect(JSON.stringify(memory.body)).toContain('The gate code is 4321.');
    client.socket.close();
  });

  it('keeps organizations apart and refuses bad tokens at the upgrade', async () => {
    const { server, alice, bob } = ctx;
    const created = await server.request('POST', '/voice/sessions', { token: alice.token, body: {} });
    const { id, ws_url: wsUrl, client_token: token } = created.body;
    for (const [method, path] of [
      ['GET', `/voice/sessions/${id}`],
      ['POST', `/voice/sessions/${id}/end`],
    ] as const) {
      expect((await server.request(method, path, { token: bob.token })).status).toBe(404);
    }
    const bobs = await server.request('GET', '/voice/sessions', { token: bob.token });
    expect(bobs.body.items.map((item: { id: string }) => item.id)).not.toContain(id);
    const wrong = await refusedUpgrade(`${wsUrl}?token=vst_wrong`);
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).error.code).toBe('unauthorized');
    expect((await refusedUpgrade(wsUrl)).status).toBe(401);
    // a token of another session does not open this one
    const other = await server.request('POST', '/voice/sessions', { token: alice.token, body: {} });
    expect((await refusedUpgrade(`${wsUrl}?token=${other.body.client_token}`)).status).toBe(401);
    // the token in the subprotocol header works once; a second connection is refused
    const client = await connectVoice(wsUrl, token);
    expect((await refusedUpgrade(wsUrl, ['bearer', token])).status).toBe(409);
    client.socket.close();
    const invalid = await server.request('POST', '/voice/sessions', { token: alice.token, body: { input_audio_format: 'mp3' } });
    expect(invalid.status).toBe(400);
  });
});

describe.skipIf(!hasEspeak)('voice sessions across a restart and under a cost cap', () => {
  it('a session record survives a restart; a live one is ended as shutdown', async () => {
    const fake = await startFakeRealtime();
    const env = { ...envOf(fake), JWT_SECRET: 'a'.repeat(64) };
    const first = await startTestServer(env);
    try {
      const owner = await first.register('Restart Inc');
      fake.script.push({ heard: 'hello', reply: 'Hello.', audioMs: 100 });
      const { id, client } = await start(first, owner, { turn_detection: { type: 'none' } });
      client.send({ type: 'commit' });
      await client.waitFor((event) => event.type === 'agent_transcript' && event.final === true, 'the answer');
      await eventually(async () =>
        (await first.request('GET', `/voice/sessions/${id}`, { token: owner.token })).body.transcripts.length === 2 ? true : undefined,
      );
      await first.service.stop();
      await client.closed;
      expect(client.events.at(-1)).toEqual({ type: 'ended', reason: 'shutdown' });
      const second = await startTestServer(env, { dataDir: first.dataDir });
      try {
        const record = await second.request('GET', `/voice/sessions/${id}`, { token: owner.token });
        expectStatus(record, 200).toMatchObject({
          state: 'ended',
          end_reason: 'shutdown',
          transcripts: [
            { role: 'user', text: 'hello' },
            { role: 'agent', text: 'Hello.' },
          ],
        });
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
      await fake.stop();
    }
  });

  it("ends a session when the organization's daily cap is reached and refuses new ones", async () => {
    const fake = await startFakeRealtime();
    const server = await startTestServer({ ...envOf(fake), CHAT_COST_CAP_USD_PER_DAY: '0.001' });
    try {
      const owner = await server.register('Capped Inc');
      fake.script.push({ heard: 'hi', reply: 'Hi.', audioMs: 100, usage: { input_tokens: 1000, output_tokens: 1000 } });
      const { client } = await start(server, owner, { turn_detection: { type: 'none' } });
      client.send({ type: 'commit' });
      const ended = await client.waitFor((event) => event.type === 'ended', 'ended');
      expect(ended.reason).toBe('cost_cap_exceeded');
      const refused = await server.request('POST', '/voice/sessions', { token: owner.token, body: {} });
      expectStatus(refused, 429).toMatchObject({ error: { code: 'cost_cap_exceeded' } });
    } finally {
      await server.stop();
      await fake.stop();
    }
  });
});
