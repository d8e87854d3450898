/**
 * A manual run of a task naming a gateway (`POST /tasks/:id/run`) asks the
 * gateway, not the workers: with workers on and no worker alive it still
 * runs on the engine, and a gateway probed down (and still down when probed
 * again) answers 503 `sidecar_unavailable` before any run is created.
 */
import { describe, expect, it } from 'vitest';
import { useSuite } from '../helpers/suite.js';
import { oneOrg } from '../helpers/orgs.js';
import { expectError, expectStatus } from '../helpers/expect-status.js';
import { startFakeTemporal } from '../fakes/temporal/server.js';
import { createTask, runEnds, runsOf } from '../tasks/helpers.js';
import { WORKERS_ENV } from '../workers/helpers.js';

const KEY = 'temporal-api-key-for-manual-runs';
const CONTEXT = { namespace: 'agents-ns', task_queue: 'agent-steps', workflow_type: 'RunAgentStep' };

describe('manual runs of a task on a gateway (workers on, none alive)', () => {
  const ctx = useSuite(async (own) => {
    const temporal = own(await startFakeTemporal({ apiKey: KEY, namespaces: ['agents-ns'] }));
    return { temporal, ...own(await oneOrg(WORKERS_ENV), (it) => it.server.stop()) };
  });

  const gatewayTask = async (name: string) => {
    const { server, owner, temporal } = ctx;
    const gateway = await server.request('POST', '/gateways', {
      token: owner.token,
      body: { name, engine_type: 'temporal', base_url: temporal.url, api_key: KEY, context: CONTEXT },
    });
    expectStatus(gateway, 201);
    const task = await createTask(server, owner, { name: `task on ${name}`, trigger: { kind: 'webhook' }, input: { instruction: 'go' }, gateway: name });
    return { gateway: gateway.body, task };
  };

  /** a manual run is accepted (202) and ends succeeded */
  const runsToSuccess = async (task: { id: string }) => {
    const { server, owner } = ctx;
    const fire = await server.request('POST', `/tasks/${task.id}/run`, { token: owner.token });
    expectStatus(fire, 202);
    expect(await runEnds(server, owner, task.id, fire.body.run_id)).toMatchObject({ status: 'succeeded' });
  };

  it('runs on the engine: no agent worker is needed', async () => {
    const { server, owner, temporal } = ctx;
    temporal.behave(() => ({ complete: { remote: true } }));
    const { task } = await gatewayTask('engine-a');
    // a local task still needs a worker
    const local = await createTask(server, owner, { name: 'local', trigger: { kind: 'webhook' }, input: { instruction: 'x' } });
    expectError(await server.request('POST', `/tasks/${local.id as string}/run`, { token: owner.token }), 503, 'worker_unavailable');

    await runsToSuccess(task);
  });

  it('answers 503 sidecar_unavailable and creates no run while the gateway is down; runs again once it is back', async () => {
    const { server, owner, temporal } = ctx;
    const { gateway, task } = await gatewayTask('engine-b');
    temporal.failWith(503);
    try {
      const probed = await server.request('POST', `/gateways/${gateway.id as string}/test`, { token: owner.token });
      expect(probed.body.last_health_status).toBe('down');
      const refused = await server.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token });
      expectError(refused, 503, 'sidecar_unavailable');
      expect(refused.body.error.details).toEqual({ gateway_id: gateway.id });
      expect(await runsOf(server, owner, task.id)).toEqual([]);
    } finally {
      temporal.failWith(null);
    }
    // back up: the manual run probes again before refusing, and goes through
    temporal.behave(() => ({ complete: 'fine' }));
    await runsToSuccess(task);
  });

  it('refuses a disabled task with 409 before asking its gateway or the workers', async () => {
    const { server, owner, temporal } = ctx;
    const { gateway, task } = await gatewayTask('engine-c');
    expectStatus(await server.request('PATCH', `/tasks/${task.id as string}`, { token: owner.token, body: { enabled: false } }), 200);
    const local = await createTask(server, owner, { name: 'local disabled', trigger: { kind: 'webhook' }, input: { instruction: 'x' }, enabled: false });
    temporal.failWith(503);
    try {
      expectStatus(await server.request('POST', `/gateways/${gateway.id as string}/test`, { token: owner.token }), 200);
      expectError(await server.request('POST', `/tasks/${task.id as string}/run`, { token: owner.token }), 409, 'conflict');
      expectError(await server.request('POST', `/tasks/${local.id as string}/run`, { token: owner.token }), 409, 'conflict');
    } finally {
      temporal.failWith(null);
    }
  });
});
