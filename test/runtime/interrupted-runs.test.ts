/** kill -9 with a run in flight: the next start finalizes it as failed/interrupted; nothing stays running. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../helpers/suite.js';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startServerProcess } from '../helpers/process.js';
import { request } from '../helpers/server.js';
import { names, openStream } from './chat-helpers.js';

describe('runs interrupted by a crash', () => {
  const ctx = useFakeLlm();

  it('are finalized as failed with reason interrupted at the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kill9-'));
    // the operator's endpoint: the fake is LLM_BASE_URL, so the organization names only provider and model
    const env = { DATA_DIR: dataDir, LLM_API_KEY: FAKE_LLM_API_KEY, LLM_BASE_URL: ctx.llm.baseUrl('openai'), JWT_SECRET: randomBytes(32).toString('hex') };
    const first = await startServerProcess(env);
    const registered = await request(first.url, 'POST', '/auth/register', {
      body: { email: 'crash@example.test', password: 'a long enough password', organization_name: 'crash' },
    });
    const token = registered.body.token as string;
    await request(first.url, 'PATCH', '/settings', {
      token,
      body: { llm_provider: 'openai', llm_model: 'gpt-4o-mini' },
    });
    const conversation = await request(first.url, 'POST', '/chat/conversations', { token, body: { title: 'crash' } });
    const id = conversation.body.id as string;
    ctx.llm.script([{ text: ['half ', 'done'], hold_after_chunks: 1 }]);
    const stream = await openStream(first.url, 'POST', `/chat/conversations/${id}/messages`, { token, body: { content: 'work' } });
    await stream.waitFor((event) => event.event === 'content_delta');
    // one more round trip: the transcript writes queued before it are in the store
    const during = await request(first.url, 'GET', `/chat/conversations/${id}`, { token });
    expect(during.body.messages[1].status).toBe('streaming');

    first.child.kill('SIGKILL');
    expect(await first.exited).toBe(null);
    await stream.ended;
    expect(stream.failure).toBeInstanceOf(TypeError);
    ctx.llm.release();

    const second = await startServerProcess(env);
    try {
      expect(second.logs.some((entry) => entry['msg'] === 'agent runs interrupted by the previous stop were finalized as failed')).toBe(true);
      const after = await request(second.url, 'GET', `/chat/conversations/${id}`, { token });
      expect(after.body.messages[1]).toMatchObject({
        status: 'failed',
        content: 'half ',
        finish_reason: 'error',
        error: { code: 'interrupted' },
      });
      const replay = await openStream(second.url, 'GET', `/chat/conversations/${id}/messages/${after.body.messages[1].id}/events`, { token });
      await replay.ended;
      expect(names(replay.events)).toEqual(['message_start', 'content_delta', 'error', 'message_end']);
      expect(replay.events[2]?.data.code).toBe('interrupted');
      // the conversation takes new messages again
      ctx.llm.script([{ text: 'back' }]);
      const next = await openStream(second.url, 'POST', `/chat/conversations/${id}/messages`, { token, body: { content: 'again' } });
      await next.ended;
      expect(names(next.events)).toEqual(['message_start', 'content_delta', 'message_end']);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
