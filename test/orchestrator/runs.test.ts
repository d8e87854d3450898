/** Workflow runs against the real server and a fake LLM: order, outputs, fan-out and join, conditions, approvals, cancel, cost caps, gateway steps. */
import { describe, expect, it } from 'vitest';
import type { GatewayDispatch } from '../../domains/orchestrator/gateway-port.js';
import { useSuite, ownLlm } from '../helpers/suite.js';
import { expectStatus } from '../helpers/expect-status.js';
import { startFakeTemporal } from '../fakes/temporal/server.js';
import { startWiredOrg } from '../helpers/llm.js';
import { agentStep, createWorkflow, ON, runUntil, startRun, stepOf, userTexts } from './helpers.js';

const TEMPORAL_KEY = 'temporal-api-key-for-workflows-1';

describe('workflow runs', () => {
  const ctx = useSuite(async (own) => ownLlm(own, await startWiredOrg(ON)));
  const reset = () => ctx.llm.reset();
  /** a fresh script for the fake LLM (one answer per agent step, in the order they ask) and a workflow of these steps */
  const scriptedWorkflow = (script: Parameters<typeof ctx.llm.script>[0], name: string, steps: unknown[]) => {
    reset();
    ctx.llm.script(script);
    return createWorkflow(ctx.server, ctx.owner, { name, steps });
  };

  it("runs A then B, passing A's output into B's instruction", async () => {
    const { server, owner, llm } = ctx;
    const workflow = await scriptedWorkflow([{ text: 'ALPHA-RESULT-42' }, { text: 'beta done' }], 'sequential', [
      agentStep('a', 'Write about {{inputs.topic}}'),
      agentStep('b', 'Improve this: {{steps.a.output}}', { needs: ['a'] }),
    ]);
    const started = await startRun(server, owner, workflow.id, { topic: 'otters' });
    expect(started.status).toBe('running');
    const run = await runUntil(server, owner, workflow.id, started.id);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'a')).toMatchObject({ status: 'succeeded', output: 'ALPHA-RESULT-42', attempts: 1 });
    expect(stepOf(run, 'b')).toMatchObject({ status: 'succeeded', output: 'beta done' });
    expect(stepOf(run, 'a').agent_run_id).toMatch(/^run_/);
    expect(userTexts(llm.requests[0]!.body)).toContain('Write about otters');
    expect(userTexts(llm.requests[1]!.body)).toContain('Improve this: ALPHA-RESULT-42');
    expect(run.cost_usd).toBeGreaterThan(0);
    const runs = await server.request('GET', `/orchestrator/workflows/${workflow.id}/runs`, { token: owner.token });
    expect(runs.body.items.map((item: any) => item.id)).toEqual([started.id]);
  });

  it('fans out B and C after A and joins them in D', async () => {
    const { server, owner, llm } = ctx;
    const workflow = await scriptedWorkflow([{ text: 'from-a' }, { text: 'branch' }, { text: 'branch' }, { text: 'joined' }], 'fan-out', [
      agentStep('a', 'start'),
      agentStep('b', 'B sees {{steps.a.output}}', { needs: ['a'] }),
      agentStep('c', 'C sees {{steps.a.output}}', { needs: ['a'] }),
      agentStep('d', 'D joins {{steps.b.output}} and {{steps.c.output}}', { needs: ['b', 'c'] }),
    ]);
    const run = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id)).id);
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((step: any) => step.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const texts = llm.requests.map((request) => userTexts(request.body));
    expect(texts[0]).toContain('start');
    expect(texts.slice(1, 3).sort()).toEqual([expect.stringContaining('B sees from-a'), expect.stringContaining('C sees from-a')]);
    expect(texts[3]).toContain('D joins branch and branch');
    // B and C were both started before either's result was needed: D started after both finished
    const [b, c, d] = ['b', 'c', 'd'].map((id) => stepOf(run, id));
    expect(d.started_at >= b.finished_at && d.started_at >= c.finished_at).toBe(true);
  });

  it('skips a step whose condition is false and runs one whose condition holds', async () => {
    const { server, owner, llm } = ctx;
    const workflow = await scriptedWorkflow([{ text: '{"verdict": "ship", "score": 7}' }, { text: 'shipped' }], 'conditions', [
      agentStep('judge', 'judge it'),
      agentStep('ship', 'ship it', { needs: ['judge'], when: { step: 'judge', path: 'verdict', equals: 'ship' } }),
      agentStep('fix', 'fix it', { needs: ['judge'], when: { step: 'judge', path: 'verdict', matches: '^(fix|redo)$' } }),
      agentStep('after_fix', 'after fix', { needs: ['fix'] }),
    ]);
    const run = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id)).id);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'judge').output).toEqual({ verdict: 'ship', score: 7 });
    expect(stepOf(run, 'ship')).toMatchObject({ status: 'succeeded', output: 'shipped' });
    expect(stepOf(run, 'fix')).toMatchObject({ status: 'skipped', reason: 'condition_false', agent_run_id: null });
    expect(stepOf(run, 'after_fix')).toMatchObject({ status: 'skipped', reason: 'needs_skipped' });
    expect(llm.requests).toHaveLength(2);
  });

  it('waits at an approval step: approved continues, denied fails the run', async () => {
    const { server, owner, llm } = ctx;
    const workflow = await scriptedWorkflow([{ text: 'after approval' }], 'approval', [
      { id: 'gate', kind: 'approval', message: 'Go ahead?' },
      agentStep('work', 'work: {{steps.gate.output.comment}}', { needs: ['gate'] }),
    ]);
    const first = await startRun(server, owner, workflow.id);
    expect(first.status).toBe('waiting_approval');
    expect(stepOf(first, 'gate').status).toBe('waiting_approval');
    const approved = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${first.id}/approvals/gate`, {
      token: owner.token,
      body: { approved: true, comment: 'looks fine' },
    });
    expect(approved.status).toBe(200);
    expect(stepOf(approved.body, 'gate')).toMatchObject({ status: 'succeeded', decided_by: owner.user.id, comment: 'looks fine' });
    const done = await runUntil(server, owner, workflow.id, first.id);
    expect(done.status).toBe('succeeded');
    expect(userTexts(llm.requests[0]!.body)).toContain('work: looks fine');
    const again = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${first.id}/approvals/gate`, {
      token: owner.token,
      body: { approved: true },
    });
    expect(again.status).toBe(409);

    const second = await startRun(server, owner, workflow.id);
    const denied = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${second.id}/approvals/gate`, {
      token: owner.token,
      body: { approved: false },
    });
    expectStatus(denied, 200).toMatchObject({ status: 'failed', reason: 'approval_denied' });
    expect(stepOf(denied.body, 'gate')).toMatchObject({ status: 'failed', reason: 'approval_denied' });
    expect(stepOf(denied.body, 'work')).toMatchObject({ status: 'cancelled', reason: 'run_failed' });
    expect(llm.requests).toHaveLength(1);
  });

  it('cancels a run mid-step: the running agent run is cancelled and the rest marked cancelled', async () => {
    const { server, owner, llm } = ctx;
    const workflow = await scriptedWorkflow([{ text: ['part', 'rest'], hold_after_chunks: 1 }], 'cancel-me', [
      agentStep('slow', 'take your time'),
      agentStep('next', 'never', { needs: ['slow'] }),
    ]);
    const started = await startRun(server, owner, workflow.id);
    await llm.whenHeld();
    const cancelled = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${started.id}/cancel`, { token: owner.token });
    expect(cancelled.status).toBe(200);
    expect(stepOf(cancelled.body, 'next')).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    // the agent run stops at its next safe point: the end of the model's turn
    llm.release();
    const run = await runUntil(server, owner, workflow.id, started.id);
    expect(run).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    expect(stepOf(run, 'slow').status).toBe('cancelled');
    expect(stepOf(run, 'next')).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const agentRun = stepOf(run, 'slow').agent_run_id as string;
    const stored = await server.service.services.collections.agentRuns.get(owner.organization.id as never, agentRun);
    expect(stored?.status).toBe('cancelled');
    const twice = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${started.id}/cancel`, { token: owner.token });
    expect(twice.status).toBe(409);
  });

  it("fails the step and the run when the step's cost cap is exceeded", async () => {
    const { server, owner } = ctx;
    const workflow = await scriptedWorkflow([{ text: 'expensive', usage: { input_tokens: 1_000_000, output_tokens: 1_000_000 } }], 'capped', [
      agentStep('pricey', 'spend', { cost_cap_usd: 0.01 }),
      agentStep('after', 'never', { needs: ['pricey'] }),
    ]);
    const run = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id)).id);
    expect(run).toMatchObject({ status: 'failed', reason: 'step_failed' });
    expect(run.error_message).toContain('cost_cap_exceeded');
    expect(stepOf(run, 'pricey')).toMatchObject({ status: 'failed', reason: 'cost_cap_exceeded' });
    expect(stepOf(run, 'pricey').cost_usd).toBeGreaterThan(0.01);
    expect(stepOf(run, 'after').status).toBe('cancelled');
  });

  it("fails the run when its steps together cross the workflow's cost cap", async () => {
    const { server, owner, llm } = ctx;
    reset();
    const usage = { input_tokens: 1_000_000, output_tokens: 0 };
    llm.script([
      { text: 'one', usage },
      { text: 'two', usage },
    ]);
    const workflow = await createWorkflow(server, owner, {
      name: 'workflow-cap',
      cost_cap_usd: 0.0001,
      steps: [agentStep('first', 'spend'), agentStep('second', 'never', { needs: ['first'] })],
    });
    const run = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id)).id);
    expect(run.status).toBe('failed');
    expect(stepOf(run, 'first')).toMatchObject({ status: 'failed', reason: 'cost_cap_exceeded' });
    expect(stepOf(run, 'second').status).toBe('cancelled');
    expect(run.cost_usd).toBeGreaterThan(0.0001);
    expect(run.cost_cap_usd).toBe(0.0001);
  });

  it('dispatches a gateway step through the GatewayDispatch port, and fails it clearly without one', async () => {
    const { server, owner } = ctx;
    const workflow = await createWorkflow(server, owner, {
      name: 'gateway',
      steps: [{ id: 'remote', kind: 'gateway', gateway: 'engine-1', input: { ticket: '{{inputs.ticket}}' } }],
    });
    // the service's own dispatcher: no gateway of that name in the organization
    const unknown = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id, { ticket: 'T-0' })).id);
    expect(unknown).toMatchObject({ status: 'failed' });
    expect(stepOf(unknown, 'remote')).toMatchObject({ status: 'failed', reason: 'not_found' });

    const wired = server.service.services.gatewayDispatcher;
    server.service.services.workflowRunner.useGatewayDispatch(null);
    const none = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id, { ticket: 'T-1' })).id);
    expect(none).toMatchObject({ status: 'failed' });
    expect(stepOf(none, 'remote')).toMatchObject({ status: 'failed', reason: 'gateway_unavailable' });

    // an outside orchestration engine stand-in, reached only through the port
    const received: unknown[] = [];
    const engine: GatewayDispatch = {
      dispatch: async (orgId, gateway, request) => {
        received.push({ orgId, gateway, request });
        return { status: 'succeeded', output: { accepted: request.input['ticket'] } };
      },
    };
    server.service.services.workflowRunner.useGatewayDispatch(engine);
    try {
      const started = await startRun(server, owner, workflow.id, { ticket: 'T-2' });
      const run = await runUntil(server, owner, workflow.id, started.id);
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'remote').output).toEqual({ accepted: 'T-2' });
      expect(received).toEqual([
        { orgId: owner.organization.id, gateway: 'engine-1', request: { workflow_run_id: started.id, step_id: 'remote', input: { ticket: 'T-2' } } },
      ]);
    } finally {
      server.service.services.workflowRunner.useGatewayDispatch(wired);
    }
  });

  it('dispatches a gateway step to a Temporal gateway of the organization and takes its result as the output', async () => {
    const { server, owner } = ctx;
    const temporal = await startFakeTemporal({ apiKey: TEMPORAL_KEY, namespaces: ['agents-ns'] });
    try {
      temporal.behave((input) => ({ complete: { triaged: input.input.ticket } }));
      const gateway = await server.request('POST', '/gateways', {
        token: owner.token,
        body: {
          name: 'temporal-wf',
          engine_type: 'temporal',
          base_url: temporal.url,
          api_key: TEMPORAL_KEY,
          context: { namespace: 'agents-ns', task_queue: 'steps', workflow_type: 'Triage' },
        },
      });
      expectStatus(gateway, 201);
      const workflow = await createWorkflow(server, owner, {
        name: 'via temporal',
        steps: [{ id: 'remote', kind: 'gateway', gateway: 'temporal-wf', input: { ticket: '{{inputs.ticket}}' } }],
      });
      const run = await runUntil(server, owner, workflow.id, (await startRun(server, owner, workflow.id, { ticket: 'T-7' })).id);
      expect(run.status).toBe('succeeded');
      expect(stepOf(run, 'remote').output).toEqual({ triaged: 'T-7' });
      expect([...temporal.workflows.values()][0]).toMatchObject({
        workflowType: 'Triage',
        input: { workflow_run_id: run.id, step_id: 'remote', input: { ticket: 'T-7' } },
      });
    } finally {
      await temporal.close();
    }
  });
});
