/**
 * The spec's third typical composition, end to end with fakes: a binding on a
 * Slack channel with mention-only triggering, thread preservation and a
 * read-only rule answers an infrastructure question with cluster
 * (kubernetes), code-host (github) and dashboard (grafana) tools and memory;
 * the write it attempts is refused with the read-only notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.js';
import { seedGrafana, startFakeGrafanaServer, type FakeGrafanaServer } from '../fakes/grafana/server.js';
import { sampleCluster } from '../fixtures/kubernetes/cluster.js';
import { startFakeKubeServer, type FakeKubeServer } from '../fakes/kubernetes/server.js';
import { GOOD_TOKEN, seedGithub } from '../fixtures/github/seed.js';
import { askInThread, connectChannel, settle, startWorld, type ChannelWorld } from './helpers.js';

let world: ChannelWorld;
let kube: FakeKubeServer;
let github: FakeGithub;
let grafana: FakeGrafanaServer;

const execute = (id: string, tool: string, args: Record<string, unknown>) => ({ id, name: 'execute_connector_tool', arguments: { tool, arguments: args } });
const ANSWER =
  'api in payments is crash-looping (OOMKilled, 7 restarts); CI on acme/api failed at a1 "fix login" by alice; HighErrorRate is firing. Team Falcon owns it. I cannot restart it here: this channel is read-only.';

beforeAll(async () => {
  world = await startWorld();
  kube = await startFakeKubeServer(sampleCluster());
  github = await startFakeGithub();
  seedGithub(github);
  grafana = await startFakeGrafanaServer();
  seedGrafana(grafana);
  grafana.tokens.set('glsa_viewer', { login: 'sa-agent-viewer', role: 'Viewer' });
});
afterAll(async () => {
  await world.close();
  await kube.close();
  await github.stop();
  await grafana.close();
});

describe('composition: mention-only, thread-preserving, read-only binding over cluster, code host, dashboards and memory', () => {
  it('answers the infrastructure question in the thread and refuses the write', async () => {
    const session = await world.server.register();
    const sourceIds: string[] = [];
    for (const body of [
      { name: 'prod cluster', connector: 'kubernetes', config: { auth: { kind: 'kubeconfig', kubeconfig: kube.kubeconfig() } } },
      { name: 'GitHub acme', connector: 'github', config: { auth: { kind: 'pat', token: GOOD_TOKEN }, orgs: ['acme'], base_url: github.url } },
      { name: 'Grafana', connector: 'grafana', config: { base_url: grafana.url, api_token: 'glsa_viewer' } },
    ]) {
      const created = await world.server.request('POST', '/sources', { token: session.token, body });
      expect(created.status, created.text).toBe(201);
      sourceIds.push(created.body.id as string);
    }
    const memory = await world.server.request('POST', '/memory', {
      token: session.token,
      body: { kind: 'fact', realm: 'default', text: 'The api service in the payments namespace is owned by team Falcon.' },
    });
    expect(memory.status, memory.text).toBe(201);
    const channel = await connectChannel(world, {
      session,
      channel: { display_name: 'Infra questions', source_ids: sourceIds, system_prompt: 'You answer infrastructure questions for the ops team.' },
      matchRule: { slack_channel: 'ops', mentioned: true, preserve_thread: true },
      binding: { read_only: true },
    });

    // mention-only: plain talk in the channel starts nothing
    await world.slack.say({ channel: 'C0OPS0001', user: 'U0ALICE01', text: 'the api looks slow today' });
    await settle(world);
    expect(world.llm.requests).toHaveLength(0);

    world.llm.script([
      {
        tool_calls: [
          execute('k1', 'kubernetes.list_pods', { namespace: 'payments' }),
          execute('g1', 'github.list_workflow_runs', { repo: 'acme/api', status: 'failure' }),
          execute('d1', 'grafana.list_firing_alerts', {}),
          execute('m1', 'memory.recall', { query: 'api payments owner' }),
        ],
      },
      { tool_calls: [execute('w1', 'kubernetes.rollout_restart', { namespace: 'payments', deployment: 'api' })] },
      { text: ANSWER },
    ]);
    await askInThread(world, 'why is the api in payments unhealthy? restart it if needed', ANSWER);

    // every read came back from the real connectors against the fakes
    const second = world.llm.requests[1]?.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    const results = new Map(second.messages.filter((entry) => entry.role === 'tool').map((entry) => [entry.tool_call_id, entry.content]));
    expect(results.get('k1')).toContain('CrashLoopBackOff');
    expect(results.get('g1')).toContain('failure');
    expect(results.get('d1')).toContain('HighErrorRate');
    expect(results.get('m1')).toContain('team Falcon');
    for (const content of results.values()) expect(JSON.parse(content)).toHaveProperty('result');
    // the write was refused by the read-only rule, not asked for and not sent to the cluster
    const third = world.llm.requests[2]?.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    const refusal = third.messages.find((entry) => entry.role === 'tool' && entry.tool_call_id === 'w1');
    expect(JSON.parse(refusal?.content ?? '{}')).toMatchObject({ error: { code: 'read_only' } });
    expect(kube.requests.filter((request) => request.method !== 'GET' && !request.url.includes('selfsubjectaccessreviews'))).toEqual([]);
    expect(world.slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args['blocks'] !== undefined)).toHaveLength(0);
    // the system prompt came from the channel
    const first = world.llm.requests[0]?.body as { messages: { role: string; content: string }[] };
    expect(first.messages[0]?.content).toContain('You answer infrastructure questions for the ops team.');
    expect(first.messages[0]?.content).toContain('read-only');
    const runs = await world.server.service.services.collections.agentRuns.findAll(session.organization.id as never);
    expect(runs.filter((run) => run.input['channel_id'] === channel.channelId).map((run) => run.status)).toEqual(['succeeded']);
  });
});
