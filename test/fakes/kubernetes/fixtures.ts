/** A small cluster for the fake API server: two namespaces, a deployment with pods (one crash-looping), warnings. */
import type { FakeKubeState } from './server.js';

const container = (name: string, image: string, restarts: number, waiting?: string) => ({
  name,
  image,
  ready: waiting === undefined,
  restartCount: restarts,
  state: waiting === undefined ? { running: { startedAt: '2026-11-20T08:00:00Z' } } : { waiting: { reason: waiting, message: 'back-off 5m0s restarting failed container' } },
  ...(restarts > 0 ? { lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } } } : {}),
});

const pod = (namespace: string, name: string, labels: Record<string, string>, statuses: ReturnType<typeof container>[], phase = 'Running') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace,
    uid: `uid-${name}`,
    labels,
    creationTimestamp: '2026-11-20T08:00:00Z',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name.split('-').slice(0, -1).join('-')}`, uid: 'rs-1', controller: true }],
  },
  spec: { nodeName: 'node-a', containers: statuses.map((s) => ({ name: s.name, image: s.image })) },
  status: { phase, podIP: '10.0.0.12', startTime: '2026-11-20T08:00:00Z', containerStatuses: statuses },
});

export function sampleCluster(): FakeKubeState {
  return {
    namespaces: ['default', 'payments', 'kube-system'].map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, uid: `ns-${name}`, creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'kubernetes.io/metadata.name': name } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    })),
    pods: [
      pod('payments', 'api-7d9f-abcde', { app: 'api', 'pod-template-hash': '7d9f' }, [container('api', 'registry.local/api:1.4.2', 0)]),
      pod('payments', 'api-7d9f-fghij', { app: 'api', 'pod-template-hash': '7d9f' }, [container('api', 'registry.local/api:1.4.2', 7, 'CrashLoopBackOff')]),
      pod('payments', 'worker-55c-xyz12', { app: 'worker' }, [container('worker', 'registry.local/worker:2.0.0', 0), container('sidecar', 'envoy:1.30', 0)]),
      pod('default', 'hello-1', { app: 'hello' }, [container('hello', 'nginx:1.27', 0)]),
    ],
    events: [
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'api-7d9f-fghij.17a', namespace: 'payments' },
        involvedObject: { kind: 'Pod', name: 'api-7d9f-fghij', namespace: 'payments' },
        reason: 'BackOff',
        message: 'Back-off restarting failed container api in pod api-7d9f-fghij',
        type: 'Warning',
        count: 42,
        firstTimestamp: '2026-11-21T07:00:00Z',
        lastTimestamp: '2026-11-22T05:00:00Z',
      },
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'api.17b', namespace: 'payments' },
        involvedObject: { kind: 'Deployment', name: 'api', namespace: 'payments' },
        reason: 'ScalingReplicaSet',
        message: 'Scaled up replica set api-7d9f to 2',
        type: 'Normal',
        count: 1,
        firstTimestamp: '2026-11-20T08:00:00Z',
        lastTimestamp: '2026-11-20T08:00:00Z',
      },
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'hello-1.17c', namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'hello-1', namespace: 'default' },
        reason: 'Unhealthy',
        message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
        type: 'Warning',
        count: 3,
        firstTimestamp: '2026-11-22T04:00:00Z',
        lastTimestamp: '2026-11-22T05:10:00Z',
      },
    ],
    deployments: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api', namespace: 'payments', generation: 3, labels: { app: 'api', team: 'payments-core' }, annotations: { 'deployment.kubernetes.io/revision': '3' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          strategy: { type: 'RollingUpdate' },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'registry.local/api:1.4.2' }] } },
        },
        status: {
          replicas: 2,
          readyReplicas: 1,
          updatedReplicas: 2,
          availableReplicas: 1,
          conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }],
        },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'worker', namespace: 'payments', generation: 1, labels: { app: 'worker' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'worker' } },
          strategy: { type: 'RollingUpdate' },
          template: { metadata: { labels: { app: 'worker' } }, spec: { containers: [{ name: 'worker', image: 'registry.local/worker:2.0.0' }] } },
        },
        status: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, availableReplicas: 1 },
      },
    ],
    logs: {
      'payments/api-7d9f-fghij/api': Array.from({ length: 300 }, (_, i) => `line ${i + 1}: ${i === 299 ? 'FATAL out of memory' : 'ok'}`).join('\n') + '\n',
      'payments/worker-55c-xyz12/worker': 'worker started\n',
    },
  };
}
