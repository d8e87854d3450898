/** GET /task-recommendations over real data: chat questions asked through the chat API (fake LLM) and sources created through /sources. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startLlmServer, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import { send, wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { runEnds } from '../tasks/helpers.js';

describe('task recommendations', () => {
  let server: TestServer, llm: FakeLlmServer;
  beforeAll(async () => ({ server, llm } = await startLlmServer()));
  afterAll(async () => stopLlmServer({ server, llm }));

  /** asks in a new conversation (or the given one) and waits for the reply */
  async function ask(org: ChatOrg, question: string, conversationId?: string): Promise<void> {
    llm.script([{ text: 'here you go' }]);
    const stream = await send(server, org, question, conversationId);
    await stream.ended;
    expect(stream.events.at(-1)?.event).toBe('message_end');
  }

  async function conversation(org: ChatOrg): Promise<string> {
    const created = await server.request('POST', '/chat/conversations', { token: org.session.token, body: { title: 'q' } });
    return created.body.id as string;
  }

  const recommendations = async (org: ChatOrg, query = '') => server.request('GET', `/task-recommendations${query}`, { token: org.session.token });

  it('suggests a task for a question asked again and again, with the evidence', async () => {
    const org = await wireOrganization(server, llm);
    await ask(org, 'Which PRs are stale?');
    await ask(org, "What's the status of the payments deploy?");
    const second = await conversation(org);
    await ask(org, 'which pull requests are stale', second);
    await ask(org, 'hello', second);
    const third = await conversation(org);
    await ask(org, 'Which PRs are stale right now?', third);

    const answer = await recommendations(org);
    expect(answer.status).toBe(200);
    const recurring = answer.body.items.filter((item: any) => item.kind === 'recurring_question');
    expect(recurring).toHaveLength(1);
    const [suggestion] = recurring;
    expect(suggestion.evidence).toMatchObject({ count: 3, conversations: 3 });
    expect(suggestion.evidence.examples).toEqual(['Which PRs are stale right now?', 'which pull requests are stale', 'Which PRs are stale?']);
    expect(suggestion.task).toMatchObject({
      trigger: { kind: 'schedule', cron: '0 8 * * 1-5' },
      input_template: { instruction: expect.stringContaining('Which PRs are stale right now?') },
      approval_defaults: { write: 'ask' },
      enabled: true,
    });
    expect(answer.body.window_days).toBe(30);
    // the embedded graph store is there: graph patterns are looked at (an empty graph suggests nothing)
    expect(answer.body.skipped).toEqual([]);
    expect(answer.body.items.filter((item: any) => item.kind === 'cluster_health')).toEqual([]);

    // the same data, a stricter threshold: nothing recurs four times
    const strict = await recommendations(org, '?min_occurrences=4');
    expect(strict.body.items.filter((item: any) => item.kind === 'recurring_question')).toEqual([]);
    // ids are stable between calls, so a client can dismiss one
    expect((await recommendations(org)).body.items[0].id).toBe(suggestion.id);

    // another organization's chat is not evidence here
    const other = await wireOrganization(server, llm);
    expect((await recommendations(other)).body.items).toEqual([]);
  });

  it('one conversation repeating itself is not a recurring question', async () => {
    const org = await wireOrganization(server, llm);
    for (let i = 0; i < 3; i += 1) await ask(org, 'why is the checkout build failing');
    expect((await recommendations(org)).body.items).toEqual([]);
  });

  it('suggests the weekday summary for a code-host source no task uses', async () => {
    const org = await wireOrganization(server, llm);
    const created = await server.request('POST', '/sources', {
      token: org.session.token,
      body: { name: 'code', connector: 'github', config: { auth: { kind: 'pat', token: 'ghp_example_token_0000' }, orgs: ['acme'] } },
    });
    expect(created.status).toBe(201);
    const answer = await recommendations(org);
    const summary = answer.body.items.find((item: any) => item.kind === 'weekday_summary');
    expect(summary.evidence.sources).toEqual([{ id: created.body.id, name: 'code', connector: 'github' }]);
    expect(summary.task).toMatchObject({ trigger: { kind: 'schedule', cron: '0 8 * * 1-5' }, enabled_source_ids: [created.body.id] });
    expect(summary.task.input_template.instruction).toMatch(/pull requests.*failed.*deployment/);

    // created as suggested, the task uses the source: the suggestion goes away
    const task = await server.request('POST', '/tasks', { token: org.session.token, body: summary.task });
    expect(task.status).toBe(201);
    expect((await recommendations(org)).body.items.filter((item: any) => item.kind === 'weekday_summary')).toEqual([]);
  });

  it('suggests the failure-diagnosis webhook task for a build server; created and fired with its sample, it renders the build', async () => {
    const org = await wireOrganization(server, llm);
    const jenkins = await server.request('POST', '/sources', {
      token: org.session.token,
      body: { name: 'ci', connector: 'jenkins', config: { url: 'https://ci.example.com', username: 'bot', api_token: 'jenkins-api-token-0000' } },
    });
    expect(jenkins.status).toBe(201);
    const answer = await recommendations(org);
    const diagnosis = answer.body.items.find((item: any) => item.kind === 'failure_diagnosis');
    expect(diagnosis).toMatchObject({
      evidence: { source: { id: jenkins.body.id, name: 'ci', connector: 'jenkins' } },
      task: { trigger: { kind: 'webhook' }, enabled_source_ids: [jenkins.body.id] },
      try_with_sample: 'jenkins.build_failed',
    });

    const task = await server.request('POST', '/tasks', { token: org.session.token, body: diagnosis.task });
    expect(task.status).toBe(201);
    llm.script([{ text: 'The refund rounding change is the likely cause.' }]);
    const fired = await server.request('POST', `/webhook-samples/${diagnosis.try_with_sample}/run`, {
      token: org.session.token,
      body: { task_id: task.body.id },
    });
    expect(fired.status).toBe(202);
    const run = await runEnds(server, org.session, task.body.id, fired.body.run_id);
    expect(JSON.stringify(run.input)).toContain('Build payments-api #1287 ended FAILURE (https://ci.example.com/job/payments-api/1287/)');

    // a webhook task now pins the build server: no more diagnosis suggestion for it
    expect((await recommendations(org)).body.items.filter((item: any) => item.kind === 'failure_diagnosis')).toEqual([]);
  });

  it('suggests a cluster health check for a realm whose graph holds cluster workloads', async () => {
    const org = await wireOrganization(server, llm);
    const nodes = [
      { label: 'Namespace', properties: { _key: 'shop' } },
      { label: 'Pod', properties: { _key: 'shop/checkout-7d9f', phase: 'Running' } },
      { label: 'Pod', properties: { _key: 'shop/cart-5c2a', phase: 'CrashLoopBackOff' } },
      { label: 'Service', properties: { _key: 'shop/checkout' } },
    ];
    const written = await server.request('POST', '/graph/nodes', { token: org.session.token, body: { nodes } });
    expect(written.status).toBeLessThan(300);
    const answer = await recommendations(org);
    const cluster = answer.body.items.filter((item: any) => item.kind === 'cluster_health');
    expect(cluster).toHaveLength(1);
    expect(cluster[0].evidence).toEqual({ realm: 'default', nodes: { Pod: 2, Service: 1, Namespace: 1 } });
    expect(cluster[0].task).toMatchObject({ realm: 'default', trigger: { kind: 'schedule', cron: '0 8 * * 1-5' } });

    // created as suggested, it is not suggested again
    const task = await server.request('POST', '/tasks', { token: org.session.token, body: cluster[0].task });
    expect(task.status).toBe(201);
    expect((await recommendations(org)).body.items.filter((item: any) => item.kind === 'cluster_health')).toEqual([]);
    // another organization's graph is not evidence
    const other = await wireOrganization(server, llm);
    expect((await recommendations(other)).body.items).toEqual([]);
  });

  it('validates its query', async () => {
    const org = await wireOrganization(server, llm);
    for (const query of ['?days=0', '?days=366', '?min_occurrences=1', '?limit=51', '?days=abc']) {
      const answer = await recommendations(org, query);
      expect({ query, status: answer.status, code: answer.body.error?.code }).toEqual({ query, status: 400, code: 'validation_error' });
    }
    expect((await server.request('GET', '/task-recommendations')).status).toBe(401);
  });
});
