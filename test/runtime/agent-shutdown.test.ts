/**
 * Shutdown with runs in flight: a run waiting for an approval ends at once as
 * failed/shutdown; a run stuck in a model call past SHUTDOWN_GRACE_SECS is
 * stopped and ends as failed/interrupted. Their streams end, and a restart
 * finds them finalized.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../helpers/suite.js';
import { FAKE_LLM_API_KEY } from '../fakes/llm/server.js';
import { startTestServer } from '../helpers/server.js';
import { names, openStream, send, wireOrganization } from './chat-helpers.js';

describe('agent runs at shutdown', () => {
  const ctx = useFakeLlm();

  it('brings every run to a safe point before the server stops', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'));
    const env = { LLM_API_KEY: FAKE_LLM_API_KEY, SHUTDOWN_GRACE_SECS: '1' };
    const server = await startTestServer(env, { dataDir });
    const org = await wireOrganization(server, ctx.llm);
    const second = await server.request('POST', '/chat/conversations', { token: org.session.token, body: { title: 'stuck' } });

    ctx.llm.script([
      {
        tool_calls: [
          { id: 'w', name: 'execute_connector_tool', arguments: { tool: 'memory.store', arguments: { kind: 'note', realm: 'default', text: 'x' } } },
        ],
      },
    ]);
    const waiting = await send(server, org, 'store it');
    await waiting.waitFor((event) => event.event === 'approval_required');
    ctx.llm.script([{ text: ['stuck'], hold_after_chunks: 1 }]);
    const stuck = await send(server, org, 'think', second.body.id);
    await stuck.waitFor((event) => event.event === 'content_delta');

    await server.stop();
    await Promise.all([waiting.ended, stuck.ended]);
    expect(names(waiting.events).slice(-2)).toEqual(['error', 'message_end']);
    expect(waiting.events.at(-2)?.data.code).toBe('shutdown');
    expect(stuck.events.at(-2)?.data.code).toBe('interrupted');
    // no new run is accepted while stopping: the listener is closed by now
    ctx.llm.release();

    const again = await startTestServer(env, { dataDir });
    try {
      const login = await again.request('POST', '/auth/login', { body: { email: org.session.email, password: org.session.password } });
      const token = login.body.token as string;
      const first = await again.request('GET', `/chat/conversations/${org.conversationId}`, { token });
      expect(first.body.messages[1]).toMatchObject({ status: 'failed', error: { code: 'shutdown' } });
      const other = await again.request('GET', `/chat/conversations/${second.body.id}`, { token });
      expect(other.body.messages[1]).toMatchObject({ status: 'failed', content: 'stuck', error: { code: 'interrupted' } });
      const replay = await openStream(again.url, 'GET', `/chat/conversations/${second.body.id}/messages/${other.body.messages[1].id}/events`, { token });
      await replay.ended;
      expect(names(replay.events)).toEqual(['message_start', 'content_delta', 'error', 'message_end']);
    } finally {
      await again.stop();
    }
  });
});
