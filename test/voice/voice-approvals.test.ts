/**
 * Approvals and policies during a voice call, end to end: the real server
 * with features voice and policies, a client streaming real speech
 * (espeak-ng) over the audio WebSocket, and the fake realtime provider (its
 * transcription event says what it heard). A write asks aloud and is answered
 * over REST, by a spoken "yes", or by a spoken "no" after an unclear answer
 * that was asked again; a policy denial goes back as the function call's
 * output without asking anybody; decisions land in the policy decision log,
 * the activity feed and the audit log; another organization gets 404.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { useSuite } from '../helpers/suite.js';
import { startFakeRealtime, type FakeRealtime } from '../fakes/realtime/server.js';
import { readSpokenAnswer } from '../../domains/voice/spoken-answer.js';
import { connectVoice, espeakAvailable, speech, type VoiceClient } from './helpers.js';

const hasEspeak = espeakAvailable();
if (!hasEspeak) console.log('SKIP test/voice: espeak-ng is not installed (apt-get install espeak-ng)');

const READ_ONLY = 'package service.read_only\n\ndeny contains msg if {\n  input.resource.tool_effect != "read"\n  msg := "read-only"\n}\n';
// to_number fails on a non-number: evaluated with strict built-in errors, the call fails closed
const STRICT_FAILS = 'package service.numbers\n\ndeny contains msg if {\n  to_number(input.resource.args.text) > 100\n  msg := "too big"\n}\n';

const ctx = useSuite(async (own) => {
  const fake = own(await startFakeRealtime());
  const server = own(
    await startTestServer({
      SERVICE_FEATURES_VOICE: 'true',
      SERVICE_FEATURES_POLICIES: 'true',
      LLM_BASE_URL: fake.baseUrl,
      LLM_API_KEY: 'sk-operator-test',
      VOICE_PROVIDER_CA_FILE: fake.caFile,
    }),
  );
  return { fake, server, alice: await server.register('Alice Inc'), bob: await server.register('Bob Ltd') };
}, 60_000);

const storeCall = (text: string) => ({
  name: 'execute_connector_tool',
  arguments: { tool: 'memory.store', arguments: { kind: 'fact', realm: 'default', text } },
});

interface Call {
  readonly id: string;
  readonly client: VoiceClient;
  /** index of the first provider event of this session in `fake.received` */
  readonly from: number;
}

async function start(server: TestServer, fake: FakeRealtime, session: Session, body: Record<string, unknown> = {}): Promise<Call> {
  const created = await server.request('POST', '/voice/sessions', { token: session.token, body });
  expectStatus(created, 201);
  const from = fake.received.length;
  const client = await connectVoice(created.body.ws_url, created.body.client_token);
  await client.waitFor((event) => event.type === 'state_changed' && event.state === 'listening', 'listening');
  return { id: created.body.id, client, from };
}

/** what the provider got from this session */
const sent = (fake: FakeRealtime, call: Call): any[] => fake.received.slice(call.from);

const functionOutput = (fake: FakeRealtime, call: Call, callId: string) =>
  eventually(
    () => {
      const item = sent(fake, call).find((event) => event.type === 'conversation.item.create' && event.item?.call_id === callId);
      return item === undefined ? undefined : JSON.parse(item.item.output);
    },
    { what: 'the function call output' },
  );

/** the spoken question was answered and the agent is listening again (its n-th question) */
const askedAloud = async (client: VoiceClient, times = 1): Promise<void> => {
  await client.waitFor(
    () => client.events.filter((event) => event.type === 'agent_transcript' && event.final === true && event.text === 'May I do that?').length >= times,
    'the spoken question',
  );
  await client.waitFor(
    (event) => event === client.events.filter((each) => each.type === 'state_changed').at(-1) && event.state === 'listening',
    'listening after the question',
  );
};

const recordOf = (server: TestServer, session: Session, id: string) => server.request('GET', `/voice/sessions/${id}`, { token: session.token });

const feed = async (server: TestServer, session: Session, kind: string): Promise<any[]> =>
  (await server.request('GET', `/activity?kind=${kind}&limit=200`, { token: session.token })).body.items;

const auditLog = async (server: TestServer, session: Session, kind: string): Promise<any[]> =>
  (await server.request('GET', `/activity/audit-log?kind=${kind}&limit=200`, { token: session.token })).body.items;

describe.skipIf(!hasEspeak)('voice approvals and policies', () => {
  it('asks aloud, is answered over REST (never by another organization), logs the decision, the feed and the audit log', async () => {
    const { server, fake, alice, bob } = ctx;
    fake.script.push({ heard: 'remember the gate code', functionCall: storeCall('The gate code is 4321.') }, { reply: 'Saved.', audioMs: 100 });
    const call = await start(server, fake, alice);
    call.client.sendAudio(speech('remember the gate code'), 960);
    const asked = await call.client.waitFor((event) => event.type === 'approval_required', 'the approval');
    expect(asked).toMatchObject({ tool: 'memory.store', arguments: { text: 'The gate code is 4321.' } });
    // spoken as a question: a response whose instructions ask it
    const question = await eventually(() => sent(fake, call).find((event) => event.type === 'response.create' && event.response?.instructions), {
      what: 'the question',
    });
    expect(question.response.instructions).toContain('memory.store');
    await askedAloud(call.client);

    // another organization's token cannot answer it, nor see the session
    const path = `/voice/sessions/${call.id}/approvals/${asked.approval_id}`;
    expectStatus(await server.request('POST', path, { token: bob.token, body: { approved: true } }), 404);
    expect((await recordOf(server, alice, call.id)).body.tool_calls[0]).toMatchObject({ status: 'pending_approval', approval: { status: 'pending' } });

    expectStatus(await server.request('POST', path, { token: alice.token, body: { approved: true } }), 200);
    expect(await call.client.waitFor((event) => event.type === 'approval_decided', 'the decision')).toMatchObject({
      approval_id: asked.approval_id,
      approved: true,
      via: 'api',
    });
    await call.client.waitFor((event) => event.type === 'tool_call' && event.status === 'succeeded', 'the tool result');
    expect(await functionOutput(fake, call, asked.call_id)).toHaveProperty('result');
    expectStatus(await server.request('POST', path, { token: alice.token, body: { approved: false } }), 409);
    const record = await eventually(async () => {
      const read = await recordOf(server, alice, call.id);
      return read.body.tool_calls[0]?.status === 'succeeded' ? read : undefined;
    });
    expect(record.body.tool_calls[0]).toMatchObject({ tool: 'memory.store', approval: { status: 'approved', decided_by: alice.user.id, via: 'api' } });

    // the policy gate decided it as it decides a run's call (no policy: allowed), and logged it
    const decisions = await server.request('GET', '/policies/decisions', { token: alice.token });
    expect(decisions.body.items.map((entry: any) => [entry.input.resource.tool, entry.result, entry.input.subject.user])).toContainEqual([
      'memory.store',
      'allow',
      alice.user.id,
    ]);
    // the feed: asked and decided, like a run's approvals; the audit log: the REST answer
    const requested = await eventually(async () => (await feed(server, alice, 'approval.requested')).find((entry) => entry.subject.id === asked.approval_id));
    expect(requested.details).toMatchObject({ voice_session_id: call.id, tool: 'memory.store' });
    const decided = await eventually(async () => (await feed(server, alice, 'approval.decided')).find((entry) => entry.subject.id === asked.approval_id));
    expect(decided).toMatchObject({ actor: { id: alice.user.id }, details: { decision: 'approved', via: 'api', voice_session_id: call.id } });
    const audited = (await auditLog(server, alice, 'approval')).find((entry) => entry.resource.id === asked.approval_id);
    expect(audited).toMatchObject({
      action: 'decide',
      actor: { id: alice.user.id },
      route: expect.stringContaining('/voice/sessions/:id/approvals/:approval_id'),
    });
    expect((await feed(server, bob, 'approval.requested')).map((entry) => entry.subject.id)).not.toContain(asked.approval_id);
    call.client.socket.close();
  });

  it('a spoken "yes" (espeak-ng, the fake transcribes it) approves and runs the tool, audited as decided by voice', async () => {
    const { server, fake, alice } = ctx;
    fake.script.push(
      { heard: 'note that the printer is broken', functionCall: storeCall('The printer is broken.') },
      { heard: 'Yes.', reply: 'Okay.', audioMs: 100 },
      { reply: 'Noted.', audioMs: 100 },
    );
    const call = await start(server, fake, alice);
    call.client.sendAudio(speech('note that the printer is broken'), 960);
    const asked = await call.client.waitFor((event) => event.type === 'approval_required', 'the approval');
    await askedAloud(call.client);
    call.client.sendAudio(speech('yes'), 960);
    expect(await call.client.waitFor((event) => event.type === 'approval_decided', 'the spoken decision')).toMatchObject({
      approval_id: asked.approval_id,
      approved: true,
      via: 'speech',
    });
    await call.client.waitFor((event) => event.type === 'tool_call' && event.status === 'succeeded', 'the tool result');
    expect(await functionOutput(fake, call, asked.call_id)).toHaveProperty('result');
    const memory = await server.request('GET', '/memory', { token: alice.token });
    expect(JSON.stringify(memory.body)).toContain('The printer is broken.');
    const record = await eventually(async () => {
      const read = await recordOf(server, alice, call.id);
      return read.body.tool_calls[0]?.status === 'succeeded' ? read : undefined;
    });
    expect(record.body.tool_calls[0].approval).toEqual({ id: asked.approval_id, status: 'approved', decided_by: alice.user.id, via: 'speech' });
    expect(record.body.transcripts).toContainEqual(expect.objectContaining({ role: 'user', text: 'Yes.' }));
    const audited = await eventually(async () => (await auditLog(server, alice, 'approval')).find((entry) => entry.resource.id === asked.approval_id));
    expect(audited).toMatchObject({ action: 'decide', route: null, actor: { id: alice.user.id }, details: { decision: 'approved', via: 'speech' } });
    call.client.socket.close();
  });

  it('an unclear answer is asked again and approves nothing; a spoken "no" denies, the provider is told', async () => {
    const { server, fake, alice } = ctx;
    fake.script.push(
      { heard: 'delete nothing but store this', functionCall: storeCall('Never stored.') },
      { heard: 'Hmm, maybe, I do not know.', reply: 'Let me ask again.', audioMs: 100 },
      { heard: "No, don't do it.", reply: 'Okay.', audioMs: 100 },
      { reply: 'I did not store it.', audioMs: 100 },
    );
    const call = await start(server, fake, alice);
    call.client.sendAudio(speech('store this please'), 960);
    const asked = await call.client.waitFor((event) => event.type === 'approval_required', 'the approval');
    await askedAloud(call.client);
    call.client.sendAudio(speech('maybe'), 960);
    const again = await eventually(
      () => sent(fake, call).find((event) => event.type === 'response.create' && String(event.response?.instructions).includes('not a clear yes or no')),
      { what: 'the question asked again' },
    );
    expect(again.response.instructions).toContain('memory.store');
    await askedAloud(call.client, 2);
    expect(call.client.events.some((event) => event.type === 'approval_decided')).toBe(false);
    expect((await recordOf(server, alice, call.id)).body.tool_calls[0]).toMatchObject({ status: 'pending_approval' });

    call.client.sendAudio(speech('no'), 960);
    expect(await call.client.waitFor((event) => event.type === 'approval_decided', 'the spoken decision')).toMatchObject({ approved: false, via: 'speech' });
    const done = await call.client.waitFor((event) => event.type === 'tool_call' && event.status === 'denied', 'the denial');
    expect(done.error.code).toBe('approval_denied');
    expect((await functionOutput(fake, call, asked.call_id)).error).toMatchObject({ code: 'approval_denied' });
    const memory = await server.request('GET', '/memory', { token: alice.token });
    expect(JSON.stringify(memory.body)).not.toContain('Never stored.');
    const record = await eventually(async () => {
      const read = await recordOf(server, alice, call.id);
      return read.body.tool_calls[0]?.status === 'denied' ? read : undefined;
    });
    expect(record.body.tool_calls[0].approval).toMatchObject({ status: 'denied', decided_by: alice.user.id, via: 'speech' });
    call.client.socket.close();
  });

  it('a policy that denies, or cannot be evaluated, denies before anybody is asked: logged, audited, the output says so', async () => {
    const { server, fake } = ctx;
    for (const [name, rego, code] of [
      ['read_only', READ_ONLY, null],
      ['numbers', STRICT_FAILS, 'eval_builtin_error'],
    ] as const) {
      const org = await server.register(`Policed ${name}`);
      expectStatus(await server.request('POST', '/policies', { token: org.token, body: { name, rego_code: rego } }), 201);
      fake.script.push(
        { heard: 'what can you do', functionCall: { name: 'search_connector_tools', arguments: { query: 'memory' } } },
        { functionCall: storeCall('not a number') },
        { reply: 'I may not.', audioMs: 100 },
      );
      const call = await start(server, fake, org);
      call.client.sendAudio(speech('what can you do'), 960);
      const denied = await call.client.waitFor((event) => event.type === 'tool_call' && event.status === 'denied', 'the denial');
      expect(denied).toMatchObject({ tool: 'memory.store', error: { code: 'policy_denied' } });
      expect(call.client.events.some((event) => event.type === 'approval_required')).toBe(false);
      const output = await functionOutput(fake, call, denied.call_id);
      expect(output.error).toMatchObject({ code: 'policy_denied' });
      if (code === null) {
        expect(output.error.details.messages).toEqual(['read-only']);
        // search does not offer what is always denied
        const search = call.client.events.find(
          (event) => event.type === 'tool_call' && event.name === 'search_connector_tools' && event.status === 'succeeded',
        );
        const offered = search?.result.tools.map((tool: { name: string }) => tool.name);
        expect(offered).toContain('memory.recall');
        expect(offered).not.toContain('memory.store');
      }
      const deny = await eventually(async () => {
        const log = await server.request('GET', '/policies/decisions?result=deny', { token: org.token });
        return log.body.items[0];
      });
      expect(deny).toMatchObject({ id: output.error.details.decision_id, input: { subject: { user: org.user.id }, resource: { tool: 'memory.store' } } });
      if (code !== null) expect(deny.error.code).toBe(code);
      const audited = (await auditLog(server, org, 'tool_call')).find((entry) => entry.details.decision_id === deny.id);
      expect(audited).toMatchObject({ action: 'deny', resource: { kind: 'tool_call', id: 'memory.store' }, actor: { id: org.user.id } });
      const record = await eventually(async () => {
        const read = await recordOf(server, org, call.id);
        return read.body.tool_calls[1]?.status === 'denied' ? read : undefined;
      });
      expect(record.body.tool_calls[1]).toMatchObject({ tool: 'memory.store', approval: null, error: { code: 'policy_denied' } });
      expect((await server.request('GET', '/memory', { token: org.token })).body.items).toEqual([]);
      call.client.socket.close();
    }
  });
});

describe('reading a spoken answer', () => {
  it('approves only a listed yes, denies a listed no, and finds everything else unclear', () => {
    const cases: [string, string][] = [
      ['Yes.', 'yes'],
      ['Yeah, go ahead, please!', 'yes'],
      ['Ja, bitte.', 'yes'],
      ["Oui, s'il vous plaît", 'yes'],
      ['Sí', 'yes'],
      ['No.', 'no'],
      ["No, don't do it.", 'no'],
      ['Nein danke', 'no'],
      ['Non', 'no'],
      ['yes no', 'unclear'],
      ['yes, but wait', 'unclear'],
      ["I don't know", 'unclear'],
      ['maybe', 'unclear'],
      ['yes, delete everything', 'unclear'],
      ['', 'unclear'],
    ];
    for (const [said, read] of cases) expect([said, readSpokenAnswer(said)]).toEqual([said, read]);
  });
});
