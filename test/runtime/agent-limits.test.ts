/** What ends a run as failed besides the model: the per-run timeout and the daily cost cap. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { names, send, wireOrganization } from './chat-helpers.js';

describe('agent run limits', () => {
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => ({ server, llm } = await startLlmServer({ AGENT_RUN_TIMEOUT_SECS: '1', CHAT_COST_CAP_USD_PER_DAY: '0.001' })));
  afterAll(async () => stopLlmServer({ server, llm }));

  it('fails a run still going after AGENT_RUN_TIMEOUT_SECS with reason timeout, aborting the model call', async () => {
    const org = await wireOrganization(server, llm);
    llm.script([{ text: ['slow'], hold_after_chunks: 1 }]);
    const stream = await send(server, org, 'take your time');
    await stream.ended;
    expect(names(stream.events)).toEqual(['message_start', 'content_delta', 'error', 'message_end']);
    expect(stream.events[2]?.data.code).toBe('timeout');
    expect(stream.events[3]?.data.finish_reason).toBe('error');
    await expect.poll(() => llm.requests.at(-1)?.disconnected).toBe(true);
    const conversation = await server.request('GET', `/chat/conversations/${org.conversationId}`, { token: org.session.token });
    expect(conversation.body.messages[1]).toMatchObject({ status: 'failed', content: 'slow', error: { code: 'timeout' } });
  });

  it("fails with cost_cap_exceeded once the day's spend passes the cap, and refuses further turns that day", async () => {
    const org = await wireOrganization(server, llm, { model: 'gpt-4o-mini' });
    // gpt-4o-mini: 0.15 / 0.60 USD per million tokens -> 0.0015 + 0.0006 = 0.0021 USD > 0.001
    llm.script([{ text: 'expensive', usage: { input_tokens: 10_000, output_tokens: 1_000 } }]);
    const first = await send(server, org, 'spend');
    await first.ended;
    expect(names(first.events)).toEqual(['message_start', 'content_delta', 'error', 'message_end']);
    expect(first.events[2]?.data.code).toBe('cost_cap_exceeded');
    expect(first.events[3]?.data.usage).toEqual({ input_tokens: 10_000, output_tokens: 1_000 });

    const before = llm.requests.length;
    const second = await send(server, org, 'again');
    await second.ended;
    expect(names(second.events)).toEqual(['message_start', 'error', 'message_end']);
    expect(second.events[1]?.data.code).toBe('cost_cap_exceeded');
    expect(llm.requests.length).toBe(before);
  });
});
