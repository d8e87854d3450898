/** Firing samples into a real task: the run's input is the task's template applied to the sample, as if the sender had posted it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlmServer } from '../fakes/llm/server.js';
import { startWiredOrg, stopLlmServer } from '../helpers/llm.js';
import type { TestServer } from '../helpers/server.js';
import type { ChatOrg } from '../runtime/chat-helpers.js';
import { runEnds } from '../tasks/helpers.js';
import { expectStatus } from '../helpers/expect-status.js';

describe('POST /webhook-samples/:sample_name/run', () => {
  let server: TestServer, llm: FakeLlmServer, org: ChatOrg;
  beforeAll(async () => ({ server, llm, org } = await startWiredOrg()));
  afterAll(async () => stopLlmServer({ server, llm }));

  async function createTask(instruction: string): Promise<string> {
    const created = await server.request('POST', '/tasks', {
      token: org.session.token,
      body: { name: `diagnose ${Math.random().toString(36).slice(2, 8)}`, trigger: { kind: 'webhook' }, input_template: { instruction } },
    });
    if (created.status !== 201) throw new Error(`create task: ${created.status} ${created.text}`);
    return created.body.id as string;
  }

  const finishedRun = (taskId: string, runId: string): Promise<any> => runEnds(server, org.session, taskId, runId);

  it('fires the Jenkins build-failure sample into a webhook task', async () => {
    const taskId = await createTask(
      'Build {{trigger.body.name}} #{{trigger.body.build.number}} ended {{trigger.body.build.status}} at {{trigger.body.build.scm.commit}}',
    );
    llm.script([{ text: 'The refund rounding change broke RefundServiceTest.' }]);
    const fired = await server.request('POST', '/webhook-samples/jenkins.build_failed/run', { token: org.session.token, body: { task_id: taskId } });
    expectStatus(fired, 202).toMatchObject({ sample: 'jenkins.build_failed', task_id: taskId, run_id: expect.any(String) });
    const run = await finishedRun(taskId, fired.body.run_id);
    expect(run.status).toBe('succeeded');
    const instruction = 'Build payments-api #1287 ended FAILURE at 6113728f27ae82c7b1a177c8d03f9e96e0adf246';
    expect(JSON.stringify(run.input)).toContain(instruction);
    // the model was given the rendered instruction
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain(instruction);
  });

  it('fires a code-host sample with its sender header, and a saved sample', async () => {
    const taskId = await createTask('{{trigger.headers.x-github-event}} to {{trigger.body.repository.full_name}} ({{trigger.body.ref}})');
    llm.script([{ text: 'noted' }]);
    const fired = await server.request('POST', '/webhook-samples/github.push/run', { token: org.session.token, body: { task_id: taskId } });
    expect(fired.status).toBe(202);
    const run = await finishedRun(taskId, fired.body.run_id);
    expect(JSON.stringify(run.input)).toContain('push to Codertocat/Hello-World (refs/heads/');

    await server.request('POST', '/webhook-samples', {
      token: org.session.token,
      body: { name: 'custom.alert', body: { repository: { full_name: 'acme/api' }, ref: 'refs/heads/main' }, headers: { 'X-GitHub-Event': 'push' } },
    });
    llm.script([{ text: 'noted' }]);
    const custom = await server.request('POST', '/webhook-samples/custom.alert/run', { token: org.session.token, body: { task_id: taskId } });
    expect(custom.status).toBe(202);
    expect(JSON.stringify((await finishedRun(taskId, custom.body.run_id)).input)).toContain('push to acme/api (refs/heads/main)');
  });

  it("another organization's task is 404", async () => {
    const taskId = await createTask('x');
    const intruder = await server.register();
    const answer = await server.request('POST', '/webhook-samples/github.push/run', { token: intruder.token, body: { task_id: taskId } });
    expect(answer.status).toBe(404);
  });
});
