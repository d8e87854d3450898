/**
 * Whose key goes where: the operator's LLM_API_KEY only to LLM_BASE_URL; an
 * organization's own llm_base_url only with its own llm_api_key (write-only,
 * sealed at rest, masked on read), for chat and task runs alike.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectChannel, mention, settle, startWorld, waitForPost } from '../channels/helpers.js';
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmProvider, type FakeLlmServer } from '../fakes/llm/server.js';
import { startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { createTask, runReaches } from '../tasks/helpers.js';
import { send, streamedText } from './chat-helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

const OPERATOR_KEY = 'operator-key-must-stay-home-0123456789';
const ORG_KEY = 'org-own-key-abcdefghijklmnop';
const SECOND_KEY = 'org-second-key-qrstuvwxyz012';
const ORG_KEY_MISSING = "the organization's llm_base_url needs its own llm_api_key in /settings";

/** Every byte a fake received, headers and bodies, as one string. */
const everything = (fake: FakeLlmServer): string => JSON.stringify(fake.requests.map((entry) => ({ headers: entry.headers, body: entry.body })));

/** The metadata store's bytes on disk (the database and its write-ahead log). */
const storeBytes = (dataDir: string): Buffer =>
  Buffer.concat(
    readdirSync(dataDir)
      .filter((name) => name.startsWith('metadata.db'))
      .map((name) => readFileSync(join(dataDir, name))),
  );

describe('LLM endpoints and keys', () => {
  let operatorLlm: FakeLlmServer;
  let orgLlm: FakeLlmServer;
  let secondLlm: FakeLlmServer;
  let server: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    operatorLlm = await startFakeLlmServer({ apiKey: OPERATOR_KEY });
    orgLlm = await startFakeLlmServer({ apiKey: ORG_KEY });
    secondLlm = await startFakeLlmServer({ apiKey: SECOND_KEY });
    dataDir = mkdtempSync(join(tmpdir(), 'llm-keys-'));
    server = await startTestServer({ LLM_API_KEY: OPERATOR_KEY, LLM_BASE_URL: operatorLlm.baseUrl('openai') }, { dataDir });
  });
  afterAll(async () => {
    await server.stop();
    await Promise.all([operatorLlm.close(), orgLlm.close(), secondLlm.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const fake of [operatorLlm, orgLlm, secondLlm]) fake.reset();
  });

  const settings = (session: Session, method: 'PATCH' | 'PUT', body: Record<string, unknown>) =>
    server.request(method, '/settings', { token: session.token, body });

  /** An organization that uses the operator's endpoint: provider and model only. */
  const operatorOrg = async (): Promise<Session> => {
    const session = await server.register();
    expect((await settings(session, 'PATCH', { llm_provider: 'openai', llm_model: 'gpt-4o-mini' })).status).toBe(200);
    return session;
  };

  /** An organization with its own endpoint (the org fake) and its own key. */
  const ownOrg = async (provider: FakeLlmProvider = 'openai'): Promise<Session> => {
    const session = await server.register();
    const model = provider === 'openai' ? 'gpt-4o-mini' : 'claude-haiku-4-5';
    const response = await settings(session, 'PATCH', {
      llm_provider: provider,
      llm_model: model,
      llm_base_url: orgLlm.baseUrl(provider),
      llm_api_key: ORG_KEY,
    });
    expect(response.status, response.text).toBe(200);
    return session;
  };

  /** One chat message; resolves with the reply's text once the stream ends (or the error body when refused). */
  const chat = async (session: Session, fake: FakeLlmServer | null): Promise<{ status: number; text: string; error: any }> => {
    const conversation = await server.request('POST', '/chat/conversations', { token: session.token, body: { title: 'keys' } });
    expect(conversation.status).toBe(201);
    fake?.script([{ text: ['answered'] }]);
    const stream = await send(server, { session, conversationId: conversation.body.id as string }, 'hello');
    await stream.ended;
    const text = streamedText(stream.events);
    return { status: stream.status, text, error: stream.json?.error };
  };

  /** One manual task run; resolves with the finished run. */
  const taskRun = async (session: Session, fake: FakeLlmServer | null, status: 'succeeded' | 'failed'): Promise<any> => {
    const task = await createTask(server, session, {
      name: `keys ${randomBytes(3).toString('hex')}`,
      trigger: { kind: 'webhook' },
      input: { instruction: 'go' },
    });
    fake?.script([{ text: 'done' }]);
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: session.token });
    expect(fire.status).toBe(202);
    return runReaches(server, session, task.id, fire.body.run_id as string, status);
  };

  it('refuses an organization URL without its own key: 400 naming llm_api_key, on PATCH and PUT; the masked value does not count', async () => {
    const session = await server.register();
    const url = orgLlm.baseUrl('openai');
    const cases: Record<string, unknown>[] = [
      { llm_base_url: url },
      { llm_base_url: url, llm_api_key: '********' },
      { llm_base_url: url, llm_api_key: null },
      { llm_provider: 'openai', llm_model: 'gpt-4o', llm_base_url: url },
    ];
    for (const body of cases) {
      for (const method of ['PATCH', 'PUT'] as const) {
        const response = await settings(session, method, body);
        expect(response.status, `${method} ${JSON.stringify(body)}`).toBe(400);
        expect(response.body.error.code).toBe('validation_error');
        expect(response.body.error.details.issues[0].path).toBe('llm_api_key');
        expect(response.body.error.message).toContain('llm_api_key');
      }
    }
    const masked = await settings(session, 'PATCH', { llm_base_url: url, llm_api_key: '********' });
    expect(masked.body.error.message).toContain('the masked value does not count');
    // a key without an organization URL would go nowhere of the organization's choosing: refused
    const keyAlone = await settings(session, 'PATCH', { llm_api_key: ORG_KEY });
    expect(keyAlone.status).toBe(400);
    expect(keyAlone.body.error.details.issues[0].path).toBe('llm_api_key');
    const keyWithNull = await settings(session, 'PUT', { llm_base_url: null, llm_api_key: ORG_KEY });
    expect(keyWithNull.status).toBe(400);
    // nothing of the refused requests was written
    const read = await server.request('GET', '/settings', { token: session.token });
    expect(read.body).toMatchObject({ llm_provider: null, llm_model: null, llm_base_url: null, llm_api_key: null });
  });

  it('sends LLM_API_KEY to the operator endpoint (LLM_BASE_URL) for an organization without its own URL: chat and task runs', async () => {
    const session = await operatorOrg();
    const reply = await chat(session, operatorLlm);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('answered');
    const run = await taskRun(session, operatorLlm, 'succeeded');
    expect(run.reason).toBe(null);
    expect(operatorLlm.requests.map((entry) => [entry.path, entry.status, entry.api_key])).toEqual([
      ['/v1/chat/completions', 200, OPERATOR_KEY],
      ['/v1/chat/completions', 200, OPERATOR_KEY],
    ]);
    expect(operatorLlm.requests[0]?.headers['authorization']).toBe(`Bearer ${OPERATOR_KEY}`);
    expect(orgLlm.requests).toHaveLength(0);
  });

  it("sends an organization's own key to its own URL and never the operator key; another organization is unaffected", async () => {
    const own = await ownOrg();
    const other = await operatorOrg();
    const ownReply = await chat(own, orgLlm);
    const ownRun = await taskRun(own, orgLlm, 'succeeded');
    const otherReply = await chat(other, operatorLlm);
    expect([ownReply.status, ownReply.text, ownRun.status, otherReply.status, otherReply.text]).toEqual([200, 'answered', 'succeeded', 200, 'answered']);

    expect(orgLlm.requests.map((entry) => [entry.status, entry.api_key])).toEqual([
      [200, ORG_KEY],
      [200, ORG_KEY],
    ]);
    expect(everything(orgLlm)).not.toContain(OPERATOR_KEY);
    expect(operatorLlm.requests.map((entry) => entry.api_key)).toEqual([OPERATOR_KEY]);
    expect(everything(operatorLlm)).not.toContain(ORG_KEY);
    expect((await server.request('GET', '/settings', { token: other.token })).body).toMatchObject({ llm_base_url: null, llm_api_key: null });
  });

  it('sends the organization key as x-api-key to its own Anthropic endpoint', async () => {
    const own = await ownOrg('anthropic');
    const reply = await chat(own, orgLlm);
    expect(reply.text).toBe('answered');
    expect(orgLlm.requests.map((entry) => [entry.path, entry.status, entry.api_key])).toEqual([['/v1/messages', 200, ORG_KEY]]);
    expect(orgLlm.requests[0]?.headers['authorization']).toBe(undefined);
    expect(everything(orgLlm)).not.toContain(OPERATOR_KEY);
    expect(operatorLlm.requests).toHaveLength(0);
  });

  it('masks the key on read and keeps only a sealed value on disk', async () => {
    const own = await ownOrg();
    const read = await server.request('GET', '/settings', { token: own.token });
    expect(read.body).toMatchObject({ llm_base_url: orgLlm.baseUrl('openai'), llm_api_key: '********' });
    expect(read.text).not.toContain(ORG_KEY);
    const bytes = storeBytes(dataDir);
    // the settings record is there (its URL in clear), its key is not
    expect(bytes.includes(orgLlm.baseUrl('openai'))).toBe(true);
    expect(bytes.includes(ORG_KEY)).toBe(false);
    expect(bytes.includes(Buffer.from(ORG_KEY).toString('base64'))).toBe(false);
  });

  it('needs the key again when llm_base_url changes; the same URL keeps it; clearing the URL drops it and returns to the operator', async () => {
    const own = await ownOrg();
    const secondUrl = secondLlm.baseUrl('openai');
    for (const body of [{ llm_base_url: secondUrl }, { llm_base_url: secondUrl, llm_api_key: '********' }]) {
      const refused = await settings(own, 'PATCH', body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.issues[0].path).toBe('llm_api_key');
    }
    const moved = await settings(own, 'PATCH', { llm_base_url: secondUrl, llm_api_key: SECOND_KEY });
    expect(moved.body).toMatchObject({ llm_base_url: secondUrl, llm_api_key: '********' });
    expect((await chat(own, secondLlm)).text).toBe('answered');
    expect(secondLlm.requests.map((entry) => entry.api_key)).toEqual([SECOND_KEY]);
    expect(orgLlm.requests).toHaveLength(0);

    // the same URL again, other fields, the masked value: the key stays
    for (const [method, body] of [
      ['PATCH', { llm_model: 'gpt-4o' }],
      ['PATCH', { llm_base_url: secondUrl, llm_api_key: '********' }],
      ['PUT', { llm_provider: 'openai', llm_model: 'gpt-4o-mini', llm_base_url: secondUrl }],
    ] as const) {
      const kept = await settings(own, method, body);
      expect(kept.status, `${method} ${JSON.stringify(body)}`).toBe(200);
      expect(kept.body.llm_api_key).toBe('********');
    }
    expect((await chat(own, secondLlm)).text).toBe('answered');
    expect(secondLlm.requests.map((entry) => entry.api_key)).toEqual([SECOND_KEY, SECOND_KEY]);

    const cleared = await settings(own, 'PATCH', { llm_base_url: null });
    expect(cleared.body).toMatchObject({ llm_base_url: null, llm_api_key: null });
    expect((await chat(own, operatorLlm)).text).toBe('answered');
    expect(operatorLlm.requests.map((entry) => entry.api_key)).toEqual([OPERATOR_KEY]);
    // the key went with the URL: pointing back needs it again
    const back = await settings(own, 'PATCH', { llm_base_url: secondUrl });
    expect(back.status).toBe(400);
    expect(everything(secondLlm)).not.toContain(OPERATOR_KEY);
  });

  it('fails runs with llm_unconfigured when the organization URL has no key, without falling back to the operator', async () => {
    const own = await ownOrg();
    const removed = await settings(own, 'PATCH', { llm_api_key: null });
    expectStatus(removed, 200).toMatchObject({ llm_base_url: orgLlm.baseUrl('openai'), llm_api_key: null });

    const reply = await chat(own, null);
    expect(reply.status).toBe(422);
    expect(reply.error.code).toBe('llm_unconfigured');
    expect(reply.error.message).toContain(ORG_KEY_MISSING);
    const run = await taskRun(own, null, 'failed');
    expect(run.reason).toBe('llm_unconfigured');
    expect(run.error_message).toContain(ORG_KEY_MISSING);
    expect(orgLlm.requests).toHaveLength(0);
    expect(operatorLlm.requests).toHaveLength(0);

    // a new key for the same URL brings it back
    expect((await settings(own, 'PATCH', { llm_api_key: ORG_KEY })).body.llm_api_key).toBe('********');
    expect((await chat(own, orgLlm)).text).toBe('answered');
    expect(orgLlm.requests.map((entry) => entry.api_key)).toEqual([ORG_KEY]);
  });
});

describe('LLM keys across restarts', () => {
  let operatorLlm: FakeLlmServer;
  let orgLlm: FakeLlmServer;
  let dataDir: string;

  beforeAll(async () => {
    operatorLlm = await startFakeLlmServer({ apiKey: OPERATOR_KEY });
    orgLlm = await startFakeLlmServer({ apiKey: ORG_KEY });
    dataDir = mkdtempSync(join(tmpdir(), 'llm-keys-restart-'));
  });
  afterAll(async () => {
    await Promise.all([operatorLlm.close(), orgLlm.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const chatOnce = async (server: TestServer, token: string, fake: FakeLlmServer | null) => {
    const conversation = await server.request('POST', '/chat/conversations', { token, body: { title: 'restart' } });
    fake?.script([{ text: 'after restart' }]);
    const response = await server.request('POST', `/chat/conversations/${conversation.body.id}/messages`, { token, body: { content: 'hi' } });
    return response;
  };

  it('keeps the sealed key working after a restart; without LLM_API_KEY only the operator side is unconfigured; another server secret cannot open it', async () => {
    const jwtSecret = randomBytes(32).toString('hex');
    const operatorEnv = { LLM_API_KEY: OPERATOR_KEY, LLM_BASE_URL: operatorLlm.baseUrl('openai'), JWT_SECRET: jwtSecret };
    const first = await startTestServer(operatorEnv, { dataDir });
    let own: Session;
    let other: Session;
    try {
      own = await first.register('Own endpoint');
      other = await first.register('Operator endpoint');
      const ownSettings = { llm_provider: 'openai', llm_model: 'gpt-4o-mini', llm_base_url: orgLlm.baseUrl('openai'), llm_api_key: ORG_KEY };
      expect((await first.request('PATCH', '/settings', { token: own.token, body: ownSettings })).status).toBe(200);
      expect((await first.request('PATCH', '/settings', { token: other.token, body: { llm_provider: 'openai', llm_model: 'gpt-4o-mini' } })).status).toBe(200);
      const health = await first.request('GET', '/health');
      expect([health.body.dependencies.llm, health.body.engines.llm]).toEqual(['configured', 'llm-base-url']);
    } finally {
      await first.stop();
    }

    const second = await startTestServer(operatorEnv, { dataDir });
    try {
      const response = await chatOnce(second, own.token, orgLlm);
      expect(response.status).toBe(200);
      expect(response.text).toContain('after restart');
      expect(orgLlm.requests.map((entry) => entry.api_key)).toEqual([ORG_KEY]);
      expect(everything(orgLlm)).not.toContain(OPERATOR_KEY);
      expect((await second.request('GET', '/settings', { token: own.token })).body.llm_api_key).toBe('********');
    } finally {
      await second.stop();
    }

    orgLlm.reset();
    const noOperator = await startTestServer({ JWT_SECRET: jwtSecret }, { dataDir });
    try {
      const health = await noOperator.request('GET', '/health');
      expect([health.body.dependencies.llm, health.body.engines.llm]).toEqual(['unconfigured', 'provider-api']);
      // the organization's own endpoint does not depend on the operator's key
      expect((await chatOnce(noOperator, own.token, orgLlm)).status).toBe(200);
      expect(orgLlm.requests.map((entry) => entry.api_key)).toEqual([ORG_KEY]);
      const refused = await chatOnce(noOperator, other.token, null);
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'llm_unconfigured', message: 'no LLM is configured: missing LLM_API_KEY (environment)' });
    } finally {
      await noOperator.stop();
    }

    orgLlm.reset();
    const rotated = await startTestServer({ ...operatorEnv, JWT_SECRET: randomBytes(32).toString('hex') }, { dataDir });
    try {
      const login = await rotated.request('POST', '/auth/login', { body: { email: own.email, password: own.password } });
      expect(login.status).toBe(200);
      const refused = await chatOnce(rotated, login.body.token as string, null);
      expectError(refused, 422, 'llm_unconfigured');
      expect(refused.body.error.message).toContain("the organization's llm_api_key cannot be opened");
      expect(orgLlm.requests).toHaveLength(0);
      expect(operatorLlm.requests).toHaveLength(0);
    } finally {
      await rotated.stop();
    }
  });
});

describe('LLM keys for channel binding runs', () => {
  it("answers a Slack mention through the organization's own endpoint with its own key, not LLM_API_KEY", async () => {
    // the fake LLM accepts only its own key; the operator's is another one
    const world = await startWorld({ env: { LLM_API_KEY: OPERATOR_KEY } });
    try {
      await connectChannel(world, { matchRule: { slack_channel: '#ops' } });
      world.llm.script([{ text: 'Green.' }]);
      await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: mention(world.slack, 'status?') });
      const reply = await waitForPost(world.slack, 'C0OPS0001');
      expect(reply.args['text']).toBe('Green.');
      await settle(world);
      expect(world.llm.requests.map((entry) => [entry.status, entry.api_key])).toEqual([[200, FAKE_LLM_API_KEY]]);
      expect(everything(world.llm)).not.toContain(OPERATOR_KEY);
    } finally {
      await world.close();
    }
  });
});
