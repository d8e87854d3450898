/**
 * Cancelling work running on a gateway: a task run (`POST
 * /tasks/:id/runs/:run_id/cancel`) and a workflow run with a gateway step in
 * flight end `cancelled`; the dispatch is stored `cancelled`, polling stops,
 * and the Temporal workflow is asked to cancel (RequestCancelWorkflowExecution).
 */
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startFakeTemporal } from '../fakes/temporal/server.js';
import { createTask, runEnds } from '../tasks/helpers.js';
import { createWorkflow, ON, runUntil, startRun, stepOf } from '../orchestrator/helpers.js';

const KEY = 'temporal-api-key-for-cancels-0001';
const CONTEXT = { namespace: 'agents-ns', task_queue: 'agent-steps', workflow_type: 'RunAgentStep' };

describe('cancelling work on a gateway', () => {
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] }));
    temporal.hold(true);
    const org = own(await oneOrg(ON), (it) => it.server.stop());
    const gateway = await org.server.request('POST', '/gateways', {
      token: org.owner.token,
      body: { name: 'held', engine_type: 'temporal', base_url: temporal.url, api_key: KEY, context: CONTEXT },
    });
    expectStatus(gateway, 201);
    return { temporal, gatewayId: gateway.body.id as string, ...org };
  });

  /** the workflow the service started for this run, once polled RUNNING */
  const runningWorkflow = (runId: string) =>
    eventually(
      () =>
        [...ctx.temporal.workflows.values()].find(
          (workflow) => (workflow.input as { workflow_run_id?: string }).workflow_run_id === runId && workflow.describes >= 1,
        ),
      {
        what: `the workflow of ${runId} to be polled`,
      },
    );

  const dispatchOf = async (runId: string) => {
    const page = await ctx.server.request('GET', `/gateways/${ctx.gatewayId}/dispatches?limit=100`, { token: ctx.owner.token });
    return (page.body.items as any[]).find((item) => item.workflow_run_id === runId);
  };

  it('a task run on a gateway is cancelled: the run ends cancelled, the dispatch too, and the Temporal workflow is asked to cancel', async () => {
    const { server, owner, temporal } = ctx;
    const task = await createTask(server, owner, { name: 'remote', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, gateway: 'held' });
    const fire = await server.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
    const runId = fire.body.run_id as string;
    const workflow = await runningWorkflow(runId);

    const cancelled = await server.request('POST', `/tasks/${task.id as string}/runs/${runId}/cancel`, { token: owner.token });
    expectStatus(cancelled, 202);
    expect(await runEnds(server, owner, task.id, runId)).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const dispatch = await dispatchOf(runId);
    expect(dispatch).toMatchObject({ status: 'cancelled', error: 'cancelled' });
    expect(temporal.cancels.filter((cancel) => cancel.workflowId === workflow.workflowId)).toEqual([
      { workflowId: workflow.workflowId, runId: workflow.runId, requestId: `cancel-${dispatch.id as string}`, reason: 'cancelled by agent-context-service' },
    ]);
    const again = await server.request('POST', `/tasks/${task.id as string}/runs/${runId}/cancel`, { token: owner.token });
    expect(again.status).toBe(409);
  });

  it('a workflow run cancelled with a gateway step in flight ends cancelled and cancels the dispatch and the Temporal workflow', async () => {
    const { server, owner, temporal } = ctx;
    const definition = await createWorkflow(server, owner, {
      name: 'remote-step',
      steps: [{ id: 'remote', kind: 'gateway', gateway: 'held', input: {} }],
    });
    const started = await startRun(server, owner, definition.id as string);
    const workflow = await runningWorkflow(started.id as string);

    const cancelled = await server.request('POST', `/orchestrator/workflows/${definition.id as string}/runs/${started.id as string}/cancel`, {
      token: owner.token,
    });
    expect(cancelled.status).toBe(200);
    const run = await runUntil(server, owner, definition.id as string, started.id as string);
    expect(run).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    expect(stepOf(run, 'remote')).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const dispatch = await eventually(async () => {
      const found = await dispatchOf(started.id as string);
      return found?.status === 'cancelled' ? found : undefined;
    });
    expect(dispatch.error).toBe('cancelled');
    expect(temporal.cancels.filter((cancel) => cancel.workflowId === workflow.workflowId)).toHaveLength(1);
    const filtered = await server.request('GET', `/gateways/${ctx.gatewayId}/dispatches?status=cancelled`, { token: owner.token });
    expect(filtered.body.total).toBe(2);
  });

  it('a workflow run failed by another step cancels its gateway step in flight, and that dispatch', async () => {
    const { server, owner, temporal } = ctx;
    // no LLM is configured for this organization: the agent step fails at once, beside the gateway step
    const definition = await createWorkflow(server, owner, {
      name: 'remote-and-failing',
      steps: [
        { id: 'remote', kind: 'gateway', gateway: 'held', input: {} },
        { id: 'local', kind: 'agent', agent: 'default', instruction: 'fails' },
      ],
    });
    const started = await startRun(server, owner, definition.id as string);
    const run = await runUntil(server, owner, definition.id as string, started.id as string);
    expect(run.status).toBe('failed');
    expect(stepOf(run, 'local').status).toBe('failed');
    expect(stepOf(run, 'remote')).toMatchObject({ status: 'cancelled', reason: 'run_failed' });
    const dispatch = await eventually(async () => {
      const found = await dispatchOf(started.id as string);
      return found?.status === 'cancelled' ? found : undefined;
    });
    // cancelled before its workflow started (none started), or after (asked to cancel)
    const workflow = [...temporal.workflows.values()].find((started_) => started_.workflowId === `svc-${dispatch.id as string}`);
    if (workflow) await eventually(() => temporal.cancels.find((cancel) => cancel.workflowId === workflow.workflowId), { what: 'the cancel request' });
  });
});
