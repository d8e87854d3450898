/** `webhooks.send` through the agent loop: the real server, the fake LLM, approvals, a verifying receiver. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { send, wireOrganization, type ChatOrg, execute } from '../runtime/chat-helpers.js';
import { createWebhook } from './helpers.js';

const SECRET = 'agent-send-secret-000001';

describe('webhooks.send', () => {
  let server: TestServer, llm: FakeLlmServer, receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([SECRET]);
    ({ server, llm } = await startLlmServer({ WEBHOOK_RETRY_BASE_MS: '20' }));
  });
  afterAll(async () => {
    await stopLlmServer({ server, llm });
    await receiver.close();
  });

  const approve = (org: ChatOrg, approvalId: string, approved: boolean) =>
    server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${approvalId}`, { token: org.session.token, body: { approved } });

  it('is found by search as a write tool', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    llm.script([{ tool_calls: [{ id: 's1', name: 'search_connector_tools', arguments: { query: 'send webhook' } }] }, { text: 'found' }]);
    const stream = await send(server, org, 'which tool posts to a webhook?');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result;
    expect(JSON.stringify(result)).toContain('webhooks.send');
  });

  it('waits for approval (write=ask); approved, it delivers signed and returns the delivery', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'ask' });
    const webhook = await createWebhook(server, org.session, { name: 'incident-feed', url: receiver.url, secret: SECRET });
    const before = receiver.requests.length;
    llm.script([
      { tool_calls: [{ id: 'w1', ...execute('webhooks.send', { webhook: 'incident-feed', payload: { text: 'build 42 failed', severity: 'high' } }) }] },
      { text: 'sent' },
    ]);
    const stream = await send(server, org, 'tell the incident feed that build 42 failed');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('webhooks.send');
    // nothing leaves before the approval
    expect(receiver.requests.length).toBe(before);
    expect((await approve(org, required.data.approval_id, true)).body.decision).toBe('approved');
    await stream.ended;

    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result.result;
    expect(result).toMatchObject({ webhook: 'incident-feed', status: 'delivered', attempts: 1, last_attempt: { status: 200 } });
    const received = receiver.requests.at(-1)!;
    expect(received.verified).toBe(true);
    expect(received.json).toEqual({ text: 'build 42 failed', severity: 'high' });
    expect(received.headers['webhook-id']).toBe(result.delivery_id);

    const log = await server.request('GET', `/webhooks/${webhook.id}/deliveries`, { token: org.session.token });
    expect(log.body.items).toHaveLength(1);
    expect(log.body.items[0]).toMatchObject({ id: result.delivery_id, event: 'agent.send', status: 'delivered' });
  });

  it('denied: nothing is sent and no delivery is logged', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'ask' });
    const webhook = await createWebhook(server, org.session, { name: 'quiet', url: receiver.url, secret: SECRET });
    const before = receiver.requests.length;
    llm.script([{ tool_calls: [{ id: 'w2', ...execute('webhooks.send', { webhook: webhook.id, payload: { text: 'x' } }) }] }, { text: 'ok' }]);
    const stream = await send(server, org, 'send x');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    await approve(org, required.data.approval_id, false);
    await stream.ended;
    expect(stream.events.find((event) => event.event === 'tool_result')?.data.result.error.code).toBe('approval_denied');
    expect(receiver.requests.length).toBe(before);
    expect((await server.request('GET', `/webhooks/${webhook.id}/deliveries`, { token: org.session.token })).body.total).toBe(0);
  });

  it("an unknown webhook (or another organization's) is a readable tool error", async () => {
    const other = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    await createWebhook(server, other.session, { name: 'theirs', url: receiver.url, secret: SECRET });
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    const before = receiver.requests.length;
    llm.script([
      {
        tool_calls: [
          { id: 'w3', ...execute('webhooks.send', { webhook: 'theirs', payload: { text: 'x' } }) },
          { id: 'w4', ...execute('webhooks.send', { webhook: 'theirs' }) },
        ],
      },
      { text: 'no such webhook' },
    ]);
    const stream = await send(server, org, 'send to theirs');
    await stream.ended;
    const results = stream.events.filter((event) => event.event === 'tool_result').map((event) => event.data.result.error.code);
    expect(results).toEqual(['webhook_not_found', 'invalid_arguments']);
    expect(receiver.requests.length).toBe(before);
  });

  it('a failing receiver: the tool answers queued after the first attempt and the retries deliver it', async () => {
    const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
    const webhook = await createWebhook(server, org.session, { name: 'flaky', url: receiver.url, secret: SECRET, retries: 2 });
    receiver.failNext(1, 503, 1);
    llm.script([{ tool_calls: [{ id: 'w5', ...execute('webhooks.send', { webhook: 'flaky', payload: { n: 1 } }) }] }, { text: 'queued' }]);
    const stream = await send(server, org, 'send n=1');
    await stream.ended;
    const result = stream.events.find((event) => event.event === 'tool_result')?.data.result.result;
    expect(result).toMatchObject({ status: 'queued', attempts: 1, last_attempt: { status: 503 } });
    const requestsSoFar = receiver.requests.length;
    await receiver.waitForSuccesses(receiver.requests.filter((request) => request.answered < 300).length + 1);
    expect(receiver.requests.length).toBe(requestsSoFar + 1);
    const log = await server.request('GET', `/webhooks/${webhook.id}/deliveries/${result.delivery_id}`, { token: org.session.token });
    expect(log.body.attempts.map((attempt: any) => attempt.status)).toEqual([503, 200]);
  });
});
