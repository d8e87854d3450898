/**
 * The K2 connectors through the agent loop: the real server, sources created
 * over /sources pointing at the fakes, and the fake LLM driving a run that
 * reads a cluster and Grafana, then starts a media job (a write, approved)
 * and polls it.
 */
import { describe, expect, it } from 'vitest';
import { ownLlm, useSuite } from '../helpers/suite.js';
import { startLlmServer } from '../helpers/llm.js';
import { seedGrafana, startFakeGrafanaServer } from '../fakes/grafana/server.js';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer } from '../fakes/kubernetes/server.js';
import { startFakeRunwayServer } from '../fakes/runway/server.js';
import { send, wireOrganization, execute } from '../runtime/chat-helpers.js';
import { syncToEnd } from '../sources/helpers.js';

describe('kubernetes, grafana and runway through the agent loop', () => {
  const ctx = useSuite(async (own) => {
    const kube = own(await startFakeKubeServer(sampleCluster()));
    const grafana = own(await startFakeGrafanaServer());
    seedGrafana(grafana);
    grafana.tokens.set('glsa_viewer', { login: 'sa-agent', role: 'Viewer' });
    const runway = own(await startFakeRunwayServer());
    return { kube, grafana, runway, ...ownLlm(own, await startLlmServer()) };
  });

  it('reads pods and firing alerts, then starts a video (approved) and polls it', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    const create = async (name: string, connector: string, config: Record<string, unknown>) => {
      const created = await ctx.server.request('POST', '/sources', { token: org.session.token, body: { name, connector, config } });
      expect(created.status, created.text).toBe(201);
      return created.body as { id: string; config: Record<string, any> };
    };
    const cluster = await create('prod cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: ctx.kube.kubeconfig() } });
    const dashboards = await create('grafana', 'grafana', { base_url: ctx.grafana.url, api_token: 'glsa_viewer' });
    await create('media', 'runway', { api_key: ctx.runway.apiKey, base_url: ctx.runway.url });
    // secrets never come back: the kubeconfig (writeOnly inside auth) and the token are masked
    expect(cluster.config['auth']).toEqual({ kind: 'kubeconfig', kubeconfig: '********' });
    expect(dashboards.config['api_token']).toBe('********');

    ctx.runway.nextIds.push('6f1c8a52-agent-job');
    ctx.llm.script([
      { tool_calls: [{ id: 'c_search', name: 'search_connector_tools', arguments: { query: 'generate video from text' } }] },
      {
        tool_calls: [
          { id: 'c_pods', ...execute('kubernetes.list_pods', { namespace: 'payments' }) },
          { id: 'c_alerts', ...execute('grafana.list_firing_alerts', {}) },
        ],
      },
      { tool_calls: [{ id: 'c_video', ...execute('runway.media_text_to_video', { prompt: 'incident recap: api pods crash looping', wait: false }) }] },
      { tool_calls: [{ id: 'c_poll', ...execute('runway.media_job_status', { job_id: '6f1c8a52-agent-job' }) }] },
      { text: 'The recap video is being generated.' },
    ]);
    const stream = await send(ctx.server, org, 'What is wrong in payments? Make a short recap video.');
    const required = await stream.waitFor((event) => event.event === 'approval_required');
    expect(required.data.tool).toBe('runway.media_text_to_video');
    expect(ctx.runway.tasks.size).toBe(0);
    const approved = await ctx.server.request('POST', `/chat/conversations/${org.conversationId}/approvals/${required.data.approval_id}`, {
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
    // a durable media job of the service (wait: false answers its id at once); the platform's task id still polls directly
    expect(results['c_video'].result).toMatchObject({ job_id: expect.stringMatching(/^mjb_/), status: 'queued', ratio: '16:9', duration: 4 });
    expect(results['c_poll'].result).toMatchObject({ job_id: '6f1c8a52-agent-job', status: expect.stringMatching(/^(pending|running)$/) });
    expect(ctx.runway.tasks.get('6f1c8a52-agent-job')?.body).toEqual({
      model: 'gen4.5',
      promptText: 'incident recap: api pods crash looping',
      ratio: '1280:720',
      duration: 4,
    });
    expect(stream.events.at(-1)?.event).toBe('message_end');
  });

  it('validates the sources over /sources/:id/test (422 naming what is wrong) and syncs the cluster into a job', async () => {
    const org = await wireOrganization(ctx.server, ctx.llm);
    const create = async (name: string, connector: string, config: Record<string, unknown>) =>
      (await ctx.server.request('POST', '/sources', { token: org.session.token, body: { name, connector, config } })).body as { id: string };
    const test = (id: string) => ctx.server.request('GET', `/sources/${id}/test`, { token: org.session.token });

    const cluster = await create('prod cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: ctx.kube.kubeconfig() } });
    const stale = await create('stale cluster', 'kubernetes', { auth: { kind: 'kubeconfig', kubeconfig: ctx.kube.kubeconfig('expired-token') } });
    ctx.grafana.tokens.set('glsa_none', { login: 'sa-nobody', role: 'None' });
    const noRole = await create('grafana no role', 'grafana', { base_url: ctx.grafana.url, api_token: 'glsa_none' });
    const badKey = await create('media bad key', 'runway', { api_key: 'key_wrong', base_url: ctx.runway.url });

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

    const job = await syncToEnd(ctx.server, org.session.token, cluster.id);
    expect(job).toMatchObject({ status: 'succeeded', progress: 1, details: { namespaces: 3, services: 2, pods: 4, owners: 1 } });
    expect(job.nodes).toBe(3 + 2 + 4 + 1);
    // a connector without sync: 409
    const media = await create('media', 'runway', { api_key: ctx.runway.apiKey, base_url: ctx.runway.url });
    expect((await ctx.server.request('POST', `/sources/${media.id}/sync`, { token: org.session.token })).status).toBe(409);
  });
});
