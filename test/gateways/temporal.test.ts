/** Engine `temporal` against a fake Temporal frontend HTTP API: dispatches that succeed and fail, an engine down (503), health now and on the schedule. */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { simulatedClock } from '../helpers/clock.js';
import { eventually, pause } from '../helpers/eventually.js';
import { startFakeTemporal } from '../fakes/temporal/server.js';
import { createTask, runEnds } from '../tasks/helpers.js';
import { expectStatus } from '../helpers/expect-status.js';

const KEY = 'temporal-api-key-for-tests-7777';
const CONTEXT = { namespace: 'agents-ns', task_queue: 'agent-steps', workflow_type: 'RunAgentStep' };

/** a port nothing listens on: connection refused */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('gateways: temporal engine', () => {
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] }));
    return { temporal, ...own(await oneOrg(), (it) => it.server.stop()) };
  });

  const createGateway = async (name: string, baseUrl: string, extra: Record<string, unknown> = {}) => {
    const created = await ctx.server.request('POST', '/gateways', {
      token: ctx.owner.token,
      body: { name, engine_type: 'temporal', base_url: baseUrl, api_key: KEY, context: CONTEXT, ...extra },
    });
    if (created.status !== 201) throw new Error(`create gateway: ${created.status} ${created.text}`);
    return created.body;
  };

  it('dispatches a step: starts the workflow with a json/plain payload, polls it to completion, and answers its result', async () => {
    const { server, owner, temporal } = ctx;
    const gateway = await createGateway('temporal-ok', temporal.url, { is_default: true });
    temporal.behave((input) => ({ complete: { summary: `done ${input.input.ticket}`, steps: 3 } }));
    const outcome = await server.service.services.gatewayDispatcher.dispatch(owner.organization.id, null, {
      workflow_run_id: 'wfr_1',
      step_id: 'triage',
      input: { ticket: 'T-9' },
    });
    expect(outcome).toEqual({ status: 'succeeded', output: { summary: 'done T-9', steps: 3 } });

    const [workflow] = [...temporal.workflows.values()];
    expect(workflow).toMatchObject({
      namespace: 'agents-ns',
      workflowType: 'RunAgentStep',
      taskQueue: 'agent-steps',
      authorization: `Bearer ${KEY}`,
      input: { workflow_run_id: 'wfr_1', step_id: 'triage', input: { ticket: 'T-9' }, context: CONTEXT },
    });
    // polled: RUNNING first, then the close event read from the history
    expect(workflow!.describes).toBeGreaterThanOrEqual(2);
    expect(temporal.requests).toContain(`GET /api/v1/namespaces/agents-ns/workflows/${workflow!.workflowId}/history`);

    const log = await server.request('GET', `/gateways/${gateway.id}/dispatches`, { token: owner.token });
    expect(log.body.total).toBe(1);
    expect(log.body.items[0]).toMatchObject({
      status: 'succeeded',
      workflow_run_id: 'wfr_1',
      step_id: 'triage',
      external_ref: `agents-ns/${workflow!.workflowId}/${workflow!.runId}`,
      output: { summary: 'done T-9', steps: 3 },
      error: null,
    });
    expect(workflow!.requestId).toBe(log.body.items[0].id);
  });

  it('a failed workflow fails the dispatch with the failure message', async () => {
    const { server, owner, temporal } = ctx;
    const gateway = await createGateway('temporal-fails', temporal.url);
    temporal.behave(() => ({ fail: 'activity RunTool exhausted its retries' }));
    const outcome = await server.service.services.gatewayDispatcher.dispatch(owner.organization.id, 'temporal-fails', {
      workflow_run_id: 'wfr_2',
      step_id: 'deploy',
      input: {},
    });
    expect(outcome).toEqual({ status: 'failed', output: null, error: 'activity RunTool exhausted its retries' });
    const failed = await server.request('GET', `/gateways/${gateway.id}/dispatches?status=failed`, { token: owner.token });
    expect(failed.body.items.map((item: any) => item.error)).toEqual(['activity RunTool exhausted its retries']);
  });

  it('an engine that is down answers 503 sidecar_unavailable (5xx and connection refused) and is marked down', async () => {
    const { server, owner, temporal } = ctx;
    const dispatcher = server.service.services.gatewayDispatcher;
    const failing = await createGateway('temporal-5xx', temporal.url);
    temporal.failWith(503);
    try {
      await expect(dispatcher.dispatch(owner.organization.id, failing.id, { workflow_run_id: 'wfr_3', step_id: 's', input: {} })).rejects.toMatchObject({
        code: 'sidecar_unavailable',
        status: 503,
      });
    } finally {
      temporal.failWith(null);
    }
    const marked = await server.request('GET', `/gateways/${failing.id}`, { token: owner.token });
    expect(marked.body).toMatchObject({ last_health_status: 'down', last_health_error: 'engine answered 503' });
    const log = await server.request('GET', `/gateways/${failing.id}/dispatches`, { token: owner.token });
    expect(log.body.items[0]).toMatchObject({ status: 'failed', error: 'engine answered 503' });
    // back up: the dispatch probes again before refusing, and goes through
    temporal.behave(() => ({ complete: 'fine' }));
    await expect(dispatcher.dispatch(owner.organization.id, failing.id, { workflow_run_id: 'wfr_4', step_id: 's', input: {} })).resolves.toEqual({
      status: 'succeeded',
      output: 'fine',
    });

    const refused = await createGateway('temporal-refused', `http://127.0.0.1:${await closedPort()}`);
    await expect(dispatcher.dispatch(owner.organization.id, refused.id, { workflow_run_id: 'wfr_5', step_id: 's', input: {} })).rejects.toMatchObject({
      code: 'sidecar_unavailable',
    });
    const down = await server.request('GET', `/gateways/${refused.id}`, { token: owner.token });
    expect(down.body).toMatchObject({ last_health_status: 'down', last_health_error: 'network error ECONNREFUSED' });
  });

  it('POST /gateways/:id/test probes now: ok, down on a wrong key or unknown namespace', async () => {
    const { server, owner, temporal } = ctx;
    const good = await createGateway('probe-ok', temporal.url);
    const probed = await server.request('POST', `/gateways/${good.id}/test`, { token: owner.token });
    expectStatus(probed, 200).toMatchObject({ last_health_status: 'ok', last_health_error: null });
    expect(probed.body.last_health_at).not.toBeNull();

    const wrongKey = await server.request('PATCH', `/gateways/${good.id}`, { token: owner.token, body: { api_key: 'another-key-that-is-wrong' } });
    expect(wrongKey.body.last_health_status).toBe('unknown');
    const refused = await server.request('POST', `/gateways/${good.id}/test`, { token: owner.token });
    expect(refused.body).toMatchObject({ last_health_status: 'down', last_health_error: 'engine answered 401' });

    const unknownNs = await createGateway('probe-ns', temporal.url, { context: { ...CONTEXT, namespace: 'nope' } });
    const missing = await server.request('POST', `/gateways/${unknownNs.id}/test`, { token: owner.token });
    expect(missing.body).toMatchObject({ last_health_status: 'down', last_health_error: 'engine answered 404' });
  });
  it('a task naming a gateway dispatches its runs there; the run follows the dispatch', async () => {
    const { server, owner, temporal } = ctx;
    const gateway = await createGateway('for-tasks', temporal.url);
    temporal.behave((input) => ({ complete: { echoed: input.input.instruction } }));
    const task = await createTask(server, owner, { name: 'remote', trigger: { kind: 'webhook' }, input: { instruction: 'deploy it' }, gateway: 'for-tasks' });
    expect(task.gateway).toBe('for-tasks');
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expect(fire.status).toBe(202);
    const run = await runEnds(server, owner, task.id, fire.body.run_id);
    expect(run).toMatchObject({ status: 'succeeded', error_message: null });
    const log = await server.request('GET', `/gateways/${gateway.id}/dispatches`, { token: owner.token });
    expect(log.body.items[0]).toMatchObject({ workflow_run_id: fire.body.run_id, step_id: task.id, status: 'succeeded', output: { echoed: 'deploy it' } });

    temporal.behave(() => ({ fail: 'remote step failed' }));
    const failing = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expect(await runEnds(server, owner, task.id, failing.body.run_id)).toMatchObject({
      status: 'failed',
      reason: 'gateway_failed',
      error_message: 'remote step failed',
    });
  });
});

describe('gateways: the health schedule (simulated clock)', () => {
  const clock = simulatedClock('2026-11-24T12:00:00Z');
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] }));
    return { temporal, ...own(await oneOrg({ GATEWAY_HEALTH_INTERVAL_SECS: '60' }, { clock }), (it) => it.server.stop()) };
  });

  it('probes every gateway each interval and records ok, then down', async () => {
    const { server, owner, temporal } = ctx;
    const created = await server.request('POST', '/gateways', {
      token: owner.token,
      body: { name: 'scheduled', engine_type: 'temporal', base_url: temporal.url, api_key: KEY, context: CONTEXT },
    });
    const read = () => server.request('GET', `/gateways/${created.body.id}`, { token: owner.token }).then((answer) => answer.body);
    expect((await read()).last_health_status).toBe('unknown');

    clock.increment(60_000);
    const ok = await eventually(
      async () => {
        const gateway = await read();
        return gateway.last_health_status === 'ok' ? gateway : undefined;
      },
      { what: 'the scheduled probe to find the gateway ok' },
    );
    expect(ok.last_health_at).toBe('2026-11-24T12:01:00.000Z');

    temporal.failWith(502);
    // the next pass is scheduled once the previous one has finished
    const down = await eventually(
      async () => {
        clock.increment(60_000);
        const gateway = await read();
        return gateway.last_health_status === 'down' ? gateway : undefined;
      },
      { what: 'the scheduled probe to find the gateway down' },
    );
    expect(down.last_health_error).toBe('engine answered 502');
    temporal.failWith(null);
  });
});

describe('gateways: a dispatch past its timeout (simulated clock)', () => {
  const clock = simulatedClock('2026-11-24T12:00:00Z');
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] }));
    return { temporal, ...own(await oneOrg({}, { clock }), (it) => it.server.stop()) };
  });

  it('fails with timeout after context.timeout_secs: the task run fails gateway_failed, the workflow is asked to cancel, and polling stops', async () => {
    const { server, owner, temporal } = ctx;
    temporal.hold(true);
    const created = await server.request('POST', '/gateways', {
      token: owner.token,
      body: { name: 'slow', engine_type: 'temporal', base_url: temporal.url, api_key: KEY, context: { ...CONTEXT, timeout_secs: 60 } },
    });
    expectStatus(created, 201);
    const task = await createTask(server, owner, { name: 'slow remote', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, gateway: 'slow' });
    const fire = await server.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
    const workflow = await eventually(
      () => {
        clock.increment(1_000);
        return [...temporal.workflows.values()].find((started) => started.describes >= 1);
      },
      { what: 'the workflow to be polled' },
    );
    clock.increment(60_000);
    expect(await runEnds(server, owner, task.id, fire.body.run_id)).toMatchObject({ status: 'failed', reason: 'gateway_failed', error_message: 'timeout' });
    const log = await server.request('GET', `/gateways/${created.body.id as string}/dispatches`, { token: owner.token });
    expect(log.body.items[0]).toMatchObject({ status: 'failed', error: 'timeout', finished_at: expect.stringMatching(/^2026-11-24T12:01/) });
    // nobody waits for it any more: the workflow is asked to cancel
    expect(temporal.cancels).toEqual([expect.objectContaining({ workflowId: workflow.workflowId, runId: workflow.runId })]);
    const describes = workflow.describes;
    clock.increment(60_000);
    await pause(50);
    expect(workflow.describes).toBe(describes);
  });
});
