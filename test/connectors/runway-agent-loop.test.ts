/**
 * The K2 connectors through the agent loop: the real server, sources created
 * over /sources pointing at the fakes, and the fake LLM driving a run that
 * reads a cluster and Grafana, then starts a media job (a write, approved)
 * and polls it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_LLM_API_KEY, type FakeLlmServer } from '../fakes/llm/server.js';
import { seedGrafana, startFakeGrafanaServer, type FakeGrafanaServer } from '../fakes/grafana/server.js';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer, type FakeKubeServer } from '../fakes/kubernetes/server.js';
import { startFakeRunwayServer, type FakeRunwayServer } from '../fakes/runway/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { send, startFakeLlmServer, wireOrganization, execute } from '../runtime/chat-helpers.js';
import { syncToEnd } from '../sources/helpers.js';


describe('kubernetes, grafana and runway through the agent loop', () => {
  let server: TestServer;
  let llm: FakeLlmServer;
  let kube: FakeKubeServer;
  let grafana: FakeGrafanaServer;
  let runway: FakeRunwayServer;

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    kube = await startFakeKubeServer(sampleCluster());
    grafana = await startFakeGrafanaServer();
    seedGrafana(grafana);
    grafana.tokens.set('glsa_viewer', { login: 'sa-agent', role: 'Viewer' });
    runway = await startFakeRunwayServer();
    server = await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY });
  });
  afterAll(async () => {
    await server.stop();
    await Promise.all([llm.close(), kube.close(), grafana.close(), runway.close()]);
  });

  it('reads pods and firing alerts, then starts a video (approved) and polls it', async () => {
    const org = await wireOrganization(server, llm);
    const create = async (name: string, connector: string, config: Record<string, unknown>) => {
      const created = await server.request('POST', '/sources', { token: org.session.token, body: { name, connector, config } });
      expect(created.status, created.text).toBe(201);
      return created.body as { id: string; config: Record<string, any> };
    };
    const cluster = await create('prod cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: kube.kubeconfig() } });
    const dashboards = await create('grafana', 'grafana', { base_url: grafana.url, api_token: 'glsa_viewer' });
    await create('media', 'runway', { api_key: runway.apiKey, base_url: runway.url });
    // secrets never come back: the kubeconfig (writeOnly inside auth) and the token are masked
    expect(cluster.config['auth']).toEqual({ kind: 'kubeconfig', kubeconfig: '********' });
    expect(dashboards.config['api_token']).toBe('********');

    runway.nextIds.push('6f1c8a52-agent-job');
    llm.script([
      { tool_calls: [{ id: 'c_search', name: 'search_connector_tools', arguments: { query: 'generate video from text' } }] },
      { tool_calls: [{ id: 'c_pods', ...execute('kubernetes.list_pods', { namespace: 'payments' }) }, { id: 'c_alerts', ...execute('grafana.list_firing_alerts', {}) }] },
      { tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'incident recap: api pods crash looping' }) }] },
      { tool_calls: [{ id: 'c_poll', ...execute('runway.media_job_status', { job_id: '6f1c8a52-agent-job' }) }] },
      { text: 'The recap video is being generated.' },
    ]);
    const stream = await send(server, org, 'What is wrong in payments? Make a short recap video.');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('runway.media_text_to_video');
    expect(runway.tasks.size).toBe(0);
    const approved = await server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${required.data.approval_id}`, {
      token: org.session.token,
      body: { approved: true },
    });
    expect(approved.status).toBe(200);
    await stream.ended;

    const results = Object.fromEntries(stream.events.filter((e) => e.event === 'tool_result').map((e) => [e.data.tool_call_id, e.data.result]));
    expect((results['c_search'].result.tools as { name: string }[])[0]?.name).toBe('runway.media_text_to_video');
    expect(results['c_pods'].result.items.map((p: any) => [p.name, p.restarts])).toEqual([
      ['api-7d9f-abcde', 0],
      ['api-7d9f-fghij', 7],
      ['worker-55c-xyz12', 0],
    ]);
    expect(results['c_alerts'].result).toMatchObject({ count: 1, alerts: [{ name: 'HighErrorRate', labels: { severity: 'critical' } }] });
    expect(results['c_video'].result).toMatchObject({ job_id: '6f1c8a52-agent-job', status: 'pending', ratio: '16:9', duration: 4 });
    expect(results['c_poll'].result).toMatchObject({ job_id: '6f1c8a52-agent-job', status: 'pending' });
    expect(runway.tasks.get('6f1c8a52-agent-job')?.body).toEqual({ model: 'gen4.5', promptText: 'incident recap: api pods crash looping', ratio: '1280:720', duration: 4 });
    expect(stream.events.at(-1)?.event).toBe('message_end');
  });

  it('validates the sources over /sources/:id/test (422 naming what is wrong) and syncs the cluster into a job', async () => {
    const org = await wireOrganization(server, llm);
    const create = async (name: string, connector: string, config: Record<string, unknown>) =>
      (await server.request('POST', '/sources', { token: org.session.token, body: { name, connector, config } })).body as { id: string };
    const test = (id: string) => server.request('GET', `/sources/${id}/test`, { token: org.session.token });

    const cluster = await create('prod cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: kube.kubeconfig() } });
    const stale = await create('stale cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: kube.kubeconfig('expired-token') } });
    grafana.tokens.set('glsa_none', { login: 'sa-nobody', role: 'None' });
    const noRole = await create('grafana no role', 'grafana', { base_url: grafana.url, api_token: 'glsa_none' });
    const badKey = await create('media bad key', 'runway', { api_key: 'key_wrong', base_url: runway.url });

    const ok = await test(cluster.id);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.source.status).toBe('synced');
    for (const [id, details] of [
      [stale.id, { reason: 'unauthorized', status: 401 }],
      [noRole.id, { reason: 'insufficient_role', role: 'None', required_role: 'Viewer' }],
      [badKey.id, { reason: 'unauthorized', status: 401 }],
    ] as const) {
      const refused = await test(id);
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'source_validation_failed', details });
    }

    const job = await syncToEnd(server, org.session.token, cluster.id);
    expect(job).toMatchObject({ status: 'succeeded', progress: 1, details: { namespaces: 3, services: 2, pods: 4, owners: 1 } });
    expect(job.nodes).toBe(3 + 2 + 4 + 1);
    // a connector without sync: 409
    const media = await create('media', 'runway', { api_key: runway.apiKey, base_url: runway.url });
    expect((await server.request('POST', `/sources/${media.id}/sync`, { token: org.session.token })).status).toBe(409);
  });
});
