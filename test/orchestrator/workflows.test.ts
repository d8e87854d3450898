/** /orchestrator/workflows: CRUD, the graph's rules, organization isolation, the feature flag. */
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { useTwoOrgs } from '../helpers/suite.js';
import { agentStep, createWorkflow, ON } from './helpers.js';
import { expectStatus, expectError } from '../helpers/expect-status.js';

describe('orchestrator workflows', () => {
  const ctx = useTwoOrgs(ON);

  it('creates, reads, lists, patches, replaces and deletes a workflow', async () => {
    const { server, alice } = ctx;
    const created = await createWorkflow(server, alice, {
      name: 'review',
      description: 'two steps',
      steps: [
        agentStep('draft', 'Draft about {{inputs.topic}}'),
        agentStep('review', 'Review {{steps.draft.output}}', { needs: ['draft'], cost_cap_usd: 0.5 }),
      ],
      cost_cap_usd: 2,
    });
    expect(created).toMatchObject({
      name: 'review',
      cost_cap_usd: 2,
      steps: [
        { id: 'draft', needs: [] },
        { id: 'review', needs: ['draft'], cost_cap_usd: 0.5 },
      ],
    });
    expect(created.id).toMatch(/^wfl_/);

    const byName = await server.request('GET', '/orchestrator/workflows/review', { token: alice.token });
    expect(byName.status).toBe(200);
    expect(byName.body.id).toBe(created.id);
    const list = await server.request('GET', '/orchestrator/workflows', { token: alice.token });
    expect(list.body.items.map((item: any) => item.id)).toContain(created.id);

    const patched = await server.request('PATCH', `/orchestrator/workflows/${created.id}`, { token: alice.token, body: { description: 'changed' } });
    expectStatus(patched, 200).toMatchObject({ description: 'changed', cost_cap_usd: 2 });
    const replaced = await server.request('PUT', `/orchestrator/workflows/${created.id}`, {
      token: alice.token,
      body: { name: 'review', steps: [agentStep('only', 'Hello')] },
    });
    expectStatus(replaced, 200).toMatchObject({ description: null, cost_cap_usd: null, steps: [{ id: 'only' }] });

    const deleted = await server.request('DELETE', `/orchestrator/workflows/${created.id}`, { token: alice.token });
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', `/orchestrator/workflows/${created.id}`, { token: alice.token })).status).toBe(404);
  });

  it('rejects a cycle naming it, an unknown need, an unknown agent, duplicate ids and a when on a step not needed', async () => {
    const { server, alice } = ctx;
    const post = (steps: unknown[]) => server.request('POST', '/orchestrator/workflows', { token: alice.token, body: { name: 'bad', steps } });

    const cycle = await post([agentStep('a', 'x', { needs: ['c'] }), agentStep('b', 'x', { needs: ['a'] }), agentStep('c', 'x', { needs: ['b'] })]);
    expectError(cycle, 400, 'validation_error');
    expect(cycle.body.error.message).toContain('cycle');
    expect(cycle.body.error.details.cycle).toEqual(['a', 'c', 'b', 'a']);

    const unknownNeed = await post([agentStep('a', 'x', { needs: ['ghost'] })]);
    expect(unknownNeed.status).toBe(400);
    expect(unknownNeed.body.error.details).toMatchObject({ step: 'a', unknown_need: 'ghost' });

    const unknownAgent = await post([agentStep('a', 'x', { agent: 'nobody' })]);
    expect(unknownAgent.status).toBe(400);
    expect(unknownAgent.body.error.details).toMatchObject({ step: 'a', agent: 'nobody' });

    const duplicate = await post([agentStep('a', 'x'), agentStep('a', 'y')]);
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error.message).toContain('used twice');

    const when = await post([agentStep('a', 'x'), agentStep('b', 'y', { when: { step: 'a', equals: 'yes' } })]);
    expect(when.status).toBe(400);
    expect(when.body.error.message).toContain("must be one of the step's needs");

    const template = await post([agentStep('a', '{{#with inputs}}x{{/with}}')]);
    expect(template.status).toBe(400);

    const tooMany = await post(Array.from({ length: 101 }, (_, i) => agentStep(`s${i}`, 'x')));
    expect(tooMany.status).toBe(400);
  });

  it("answers 404 for another organization's workflow", async () => {
    const { server, alice, bob } = ctx;
    const workflow = await createWorkflow(server, alice, { name: 'private', steps: [{ id: 'ok', kind: 'approval', message: 'go?' }] });
    for (const [method, path, body] of [
      ['GET', `/orchestrator/workflows/${workflow.id}`, undefined],
      ['PATCH', `/orchestrator/workflows/${workflow.id}`, { description: 'x' }],
      ['DELETE', `/orchestrator/workflows/${workflow.id}`, undefined],
      ['POST', `/orchestrator/workflows/${workflow.id}/run`, { inputs: {} }],
      ['GET', `/orchestrator/workflows/${workflow.id}/runs`, undefined],
    ] as const) {
      const answer = await server.request(method, path, { token: bob.token, ...(body ? { body } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    const run = await server.request('POST', `/orchestrator/workflows/${workflow.id}/run`, { token: alice.token, body: { inputs: {} } });
    expect(run.status).toBe(202);
    const foreign = await server.request('GET', `/orchestrator/workflows/${workflow.id}/runs/${run.body.id}`, { token: bob.token });
    expect(foreign.status).toBe(404);
    const foreignDecision = await server.request('POST', `/orchestrator/workflows/${workflow.id}/runs/${run.body.id}/approvals/ok`, {
      token: bob.token,
      body: { approved: true },
    });
    expect(foreignDecision.status).toBe(404);
    expect(bob.organization.id).not.toBe(alice.organization.id);
  });
});

describe('orchestrator feature off', () => {
  it('answers 404 feature_disabled', async () => {
    const server = await startTestServer();
    try {
      const owner = await server.register();
      const list = await server.request('GET', '/orchestrator/workflows', { token: owner.token });
      expectError(list, 404, 'feature_disabled');
      const create = await server.request('POST', '/orchestrator/workflows', { token: owner.token, body: { name: 'x', steps: [] } });
      expectError(create, 404, 'feature_disabled');
    } finally {
      await server.stop();
    }
  });
});
