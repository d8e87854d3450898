/**
 * Temporal dispatches survive a restart (same data directory and
 * JWT_SECRET): a task run or a workflow's gateway step whose workflow is
 * RUNNING when the service stops (gracefully, or killed with SIGKILL) is
 * polled again by the next process, under the same workflow id, and ends
 * once with the workflow's result or its failure message; a dispatch still
 * `pending` (the process died while its StartWorkflowExecution was
 * unanswered) is started again with the same dispatch id as requestId.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RuntimeClock } from '../../runtime/supervisor.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually, pause } from '../helpers/eventually.js';
import { startServerProcess } from '../helpers/process.js';
import { request, signIn, startTestServer, type Session, type TestServer } from '../helpers/server.js';
import { startFakeTemporal, type FakeTemporal, type StartedWorkflow } from '../fakes/temporal/server.js';
import { createTask, runEnds } from '../tasks/helpers.js';
import { createWorkflow, ON, runUntil, startRun, stepOf } from '../orchestrator/helpers.js';

const KEY = 'temporal-api-key-for-restarts-42';
const CONTEXT = { namespace: 'agents-ns', task_queue: 'agent-steps', workflow_type: 'RunAgentStep' };

describe('temporal dispatches across a restart', () => {
  const dataDirs: string[] = [];
  const servers: TestServer[] = [];
  let temporal: FakeTemporal;
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop();
    await temporal?.close();
  });
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** a fresh data directory, secret and fake engine (workflows held RUNNING) for one test */
  const setup = async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'temporal-restart-'));
    dataDirs.push(dataDir);
    temporal = await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] });
    temporal.hold(true);
    const env = { ...ON, JWT_SECRET: randomBytes(32).toString('hex'), SHUTDOWN_GRACE_SECS: '0' };
    const start = async (options: { clock?: RuntimeClock; logLines?: string[] } = {}) => {
      const server = await startTestServer(options.logLines ? { ...env, LOG_LEVEL: 'warn' } : env, { dataDir, ...options });
      servers.push(server);
      return server;
    };
    return { dataDir, env, start };
  };

  const createGateway = async (baseUrl: string, token: string) => {
    const created = await request(baseUrl, 'POST', '/gateways', {
      token,
      body: { name: 'temporal-engine', engine_type: 'temporal', base_url: temporal.url, api_key: KEY, context: CONTEXT },
    });
    if (created.status !== 201) throw new Error(`create gateway: ${created.status} ${created.text}`);
    return created.body as { id: string };
  };

  /** the one workflow started, once the service has polled it (seen RUNNING) */
  const polledWorkflow = () =>
    eventually(() => [...temporal.workflows.values()].find((workflow) => workflow.describes >= 1), { what: 'the service to poll the running workflow' });

  const dispatchesOf = async (server: TestServer, owner: Session, gatewayId: string) =>
    (await server.request('GET', `/gateways/${gatewayId}/dispatches`, { token: owner.token })).body;

  /** one StartWorkflowExecution per dispatch, or repeats of it with the same workflow id and requestId */
  const expectOneExecution = (workflow: StartedWorkflow, dispatchId: string) => {
    expect(temporal.workflows.size).toBe(1);
    expect(workflow).toMatchObject({ workflowId: `svc-${dispatchId}`, requestId: dispatchId });
    expect(new Set(temporal.starts.map((start) => `${start.workflowId} ${start.requestId}`))).toEqual(new Set([`svc-${dispatchId} ${dispatchId}`]));
  };

  it('a task run whose workflow is RUNNING at a graceful stop is polled again after it and succeeds with the result, once', async () => {
    const { start } = await setup();
    temporal.behave((input) => ({ complete: { echoed: input.input.instruction } }));
    // the first process polls on a simulated clock: the test moves it, also past the stop
    const clock = simulatedClock(new Date().toISOString());
    const logLines: string[] = [];
    const first = await start({ clock, logLines });
    const owner = await first.register();
    const gateway = await createGateway(first.url, owner.token);
    const task = await createTask(first, owner, {
      name: 'remote',
      trigger: { kind: 'webhook' },
      input: { instruction: 'ship it' },
      gateway: 'temporal-engine',
    });
    const fire = await first.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const workflow = await eventually(
      () => {
        clock.increment(200);
        return [...temporal.workflows.values()].find((started) => started.describes >= 1);
      },
      { what: 'the service to poll the running workflow' },
    );
    const [dispatch] = (await dispatchesOf(first, owner, gateway.id)).items;
    expect(dispatch).toMatchObject({ status: 'running', workflow_run_id: runId, external_ref: `agents-ns/${workflow.workflowId}/${workflow.runId}` });
    await first.stop();
    servers.splice(servers.indexOf(first), 1);

    // the engine's worker finishes while the service is down; the stopped process's poll timers come due and do nothing
    temporal.finish(workflow.workflowId);
    const describesWhileDown = workflow.describes;
    clock.increment(3_600_000);
    await pause(50);
    expect(workflow.describes).toBe(describesWhileDown);
    expect(logLines.filter((line) => JSON.parse(line).level >= 40)).toEqual([]);
    const second = await start();
    const session = await signIn(second, owner);
    const run = await runEnds(second, session, task.id, runId);
    expect(run).toMatchObject({ status: 'succeeded', reason: null, error_message: null });
    expect(workflow.describes).toBeGreaterThan(describesWhileDown);
    expectOneExecution(workflow, dispatch.id);
    const after = await dispatchesOf(second, session, gateway.id);
    expect(after.total).toBe(1);
    expect(after.items[0]).toMatchObject({ id: dispatch.id, status: 'succeeded', output: { echoed: 'ship it' }, error: null });
    const runs = await second.request('GET', `/tasks/${task.id as string}/runs`, { token: session.token });
    expect(runs.body.items.map((item: any) => [item.id, item.status])).toEqual([[runId, 'succeeded']]);
  });

  it('a workflow that fails after the restart fails the task run with its message', async () => {
    const { start } = await setup();
    temporal.behave(() => ({ fail: 'activity Deploy exhausted its retries' }));
    const first = await start();
    const owner = await first.register();
    const gateway = await createGateway(first.url, owner.token);
    const task = await createTask(first, owner, { name: 'remote', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, gateway: 'temporal-engine' });
    const fire = await first.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const workflow = await polledWorkflow();
    await first.stop();
    servers.splice(servers.indexOf(first), 1);

    const second = await start();
    const session = await signIn(second, owner);
    // polled again, still RUNNING, before the worker gives up
    await eventually(() => (workflow.describes >= 2 ? true : undefined), { what: 'the new process to poll the workflow' });
    expect((await second.request('GET', `/tasks/${task.id as string}/runs/${runId}`, { token: session.token })).body.status).toBe('running');
    temporal.finish(workflow.workflowId);
    expect(await runEnds(second, session, task.id, runId)).toMatchObject({
      status: 'failed',
      reason: 'gateway_failed',
      error_message: 'activity Deploy exhausted its retries',
    });
    const after = await dispatchesOf(second, session, gateway.id);
    expect(after.items).toEqual([expect.objectContaining({ status: 'failed', error: 'activity Deploy exhausted its retries' })]);
    expectOneExecution(workflow, after.items[0].id as string);
  });

  it('a workflow gateway step RUNNING at a stop is polled again, and its result is the step output', async () => {
    const { start } = await setup();
    temporal.behave((input) => ({ complete: { ticket: input.input.ticket, triaged: true } }));
    const first = await start();
    const owner = await first.register();
    const gateway = await createGateway(first.url, owner.token);
    const definition = await createWorkflow(first, owner, {
      name: 'remote-steps',
      steps: [{ id: 'remote', kind: 'gateway', gateway: 'temporal-engine', input: { ticket: '{{inputs.ticket}}' } }],
    });
    const started = await startRun(first, owner, definition.id as string, { ticket: 'T-77' });
    const workflow = await polledWorkflow();
    await first.stop();
    servers.splice(servers.indexOf(first), 1);

    temporal.finish(workflow.workflowId);
    const second = await start();
    const session = await signIn(second, owner);
    const run = await runUntil(second, session, definition.id as string, started.id as string);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'remote')).toMatchObject({ status: 'succeeded', output: { ticket: 'T-77', triaged: true } });
    const after = await dispatchesOf(second, session, gateway.id);
    expect(after.total).toBe(1);
    expectOneExecution(workflow, after.items[0].id as string);
  });

  /**
   * A child-process server with a task run dispatched to the engine, killed with SIGKILL once the
   * engine received the start (`stalled`: never answered, the dispatch stays pending) or once the
   * service polled the workflow RUNNING.
   */
  const killedMidDispatch = async (env: Record<string, string>, stalled: boolean) => {
    temporal.stallStarts(stalled);
    const child = await startServerProcess(env);
    try {
      const email = `killed-${randomBytes(3).toString('hex')}@example.test`;
      const password = 'a long enough password';
      const registered = await request(child.url, 'POST', '/auth/register', { body: { email, password, organization_name: 'killed' } });
      const owner = { ...registered.body, email, password } as Session;
      await createGateway(child.url, owner.token);
      const task = await request(child.url, 'POST', '/tasks', {
        token: owner.token,
        body: { name: 'remote', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, gateway: 'temporal-engine' },
      });
      const fire = await request(child.url, 'POST', `/tasks/${task.body.id as string}/run`, { token: owner.token });
      const taskId = task.body.id as string;
      const runId = fire.body.run_id as string;
      if (stalled) await eventually(() => temporal.starts[0], { what: 'the start to reach the engine' });
      else await polledWorkflow();
      // one more round trip: the writes queued before it are in the store
      await request(child.url, 'GET', `/tasks/${taskId}/runs/${runId}`, { token: owner.token });
      return { owner, taskId, runId };
    } finally {
      child.child.kill('SIGKILL');
      await child.exited;
      temporal.stallStarts(false);
    }
  };

  it('killed with SIGKILL while its workflow is RUNNING, the next process polls it again and the run succeeds with the result', async () => {
    const { dataDir, env, start } = await setup();
    temporal.behave(() => ({ complete: { after: 'kill' } }));
    const { owner, taskId, runId } = await killedMidDispatch({ ...env, DATA_DIR: dataDir }, false);
    const [workflow] = [...temporal.workflows.values()];
    const describesAtKill = workflow!.describes;

    const second = await start();
    const session = await signIn(second, owner);
    await eventually(() => (workflow!.describes > describesAtKill ? true : undefined), { what: 'the new process to poll the workflow' });
    temporal.finish(workflow!.workflowId);
    expect(await runEnds(second, session, taskId, runId)).toMatchObject({ status: 'succeeded', error_message: null });
    const gateways = await second.request('GET', '/gateways', { token: session.token });
    const after = await dispatchesOf(second, session, gateways.body.items[0].id as string);
    expect(after.items).toEqual([expect.objectContaining({ status: 'succeeded', output: { after: 'kill' } })]);
    expectOneExecution(workflow!, after.items[0].id as string);
    expect(temporal.starts).toHaveLength(1);
  });

  it('killed with SIGKILL while its start was unanswered (pending), the dispatch is started again with the same id and the run succeeds', async () => {
    const { dataDir, env, start } = await setup();
    temporal.behave(() => ({ complete: { done: true } }));
    const { owner, taskId, runId } = await killedMidDispatch({ ...env, DATA_DIR: dataDir }, true);

    const second = await start();
    const session = await signIn(second, owner);
    const [dispatch] = (
      await second.request('GET', '/gateways', { token: session.token }).then((list) => dispatchesOf(second, session, list.body.items[0].id as string))
    ).items;
    expect(dispatch.status).toMatch(/^(pending|running)$/);
    // started again: the same workflow id and requestId, answered with the run the first start made
    await eventually(() => (temporal.starts.length >= 2 ? true : undefined), { what: 'the dispatch to be started again' });
    const [workflow] = [...temporal.workflows.values()];
    expectOneExecution(workflow!, dispatch.id as string);
    temporal.finish(workflow!.workflowId);
    expect(await runEnds(second, session, taskId, runId)).toMatchObject({ status: 'succeeded', error_message: null });
    const after = await dispatchesOf(second, session, dispatch.gateway_id as string);
    expect(after.items).toEqual([
      expect.objectContaining({
        id: dispatch.id,
        status: 'succeeded',
        output: { done: true },
        external_ref: `agents-ns/${workflow!.workflowId}/${workflow!.runId}`,
      }),
    ]);
  });
});
