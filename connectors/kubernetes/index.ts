/**
 * The built-in `kubernetes` connector (cluster manager) over the official
 * `@kubernetes/client-node`: namespaces, pods, events, logs, describe, and
 * `rollout_restart` (write); sync writes namespaces, deployments (as
 * services), pods and owners into the graph.
 */
import type { ConnectorPlugin } from '../contract.js';
import { syncKubernetes } from './sync.js';
import { describeTool } from './tools/describe.js';
import { listEventsTool } from './tools/list-events.js';
import { listNamespacesTool } from './tools/list-namespaces.js';
import { listPodsTool } from './tools/list-pods.js';
import { podLogsTool } from './tools/pod-logs.js';
import { rolloutRestartTool } from './tools/rollout-restart.js';
import { validateKubernetes } from './validate.js';

/**
 * The config schema; `in_cluster` (this service's own pod service account) is
 * offered only where the operator allows it, since every tenant would act
 * with that account.
 */
const kubernetesConfigSchema = (allowInCluster: boolean) => ({
  type: 'object',
  properties: {
    auth: {
      type: 'object',
      description: allowInCluster
        ? '`in_cluster`: the service account of the pod the service runs in; `kubeconfig`: a kubeconfig document (YAML or JSON)'
        : '`kubeconfig`: a kubeconfig document (YAML or JSON); `in_cluster` is off on this server (KUBERNETES_IN_CLUSTER)',
      // flat properties (not oneOf branches) so that `writeOnly` is found where the sources resource masks secrets
      properties: {
        kind: { enum: allowInCluster ? ['in_cluster', 'kubeconfig'] : ['kubeconfig'] },
        kubeconfig: { type: 'string', minLength: 1, writeOnly: true, description: 'the kubeconfig (it holds credentials); required for `kubeconfig`' },
        context: { type: 'string', minLength: 1, description: 'the context to use; default the current-context' },
      },
      required: ['kind'],
      additionalProperties: false,
      if: { properties: { kind: { const: 'kubeconfig' } } },
      then: { required: ['kubeconfig'] },
    },
    base_url: { type: 'string', format: 'uri', description: "overrides the cluster's API server URL (a proxy or tunnel)" },
    namespaces: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'namespaces a sync reads; default all' },
  },
  required: ['auth'],
  additionalProperties: false,
});

export interface KubernetesPluginOptions {
  /** KUBERNETES_IN_CLUSTER. @default false */
  readonly allowInCluster?: boolean;
}

export function createKubernetesPlugin(options: KubernetesPluginOptions = {}): ConnectorPlugin {
  return {
    kind: 'kubernetes',
    version: '1.0.0',
    contract: '^1',
    description: 'Kubernetes cluster: namespaces, pods and their restarts, warning events, pod logs, describe, rollout restart of deployments.',
    configSchema: kubernetesConfigSchema(options.allowInCluster ?? false),
    validate: validateKubernetes,
    tools: [listNamespacesTool, listPodsTool, listEventsTool, podLogsTool, describeTool, rolloutRestartTool],
    sync: syncKubernetes,
  };
}
