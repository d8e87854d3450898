/** kubernetes.describe: a pod or deployment with spec, status and its recent events, like `kubectl describe`. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis } from '../client.js';
import { deploymentView, eventView, podView } from '../present.js';
import { nameProperty } from './schema.js';

export const describeTool: ConnectorTool = {
  name: 'describe',
  effect: 'read',
  description:
    'Describe one pod or deployment like `kubectl describe`: its spec summary (containers, images, replicas, strategy), ' +
    'its status (phase, container states, restarts, rollout conditions) and the events about it (newest last).',
  input_schema: {
    type: 'object',
    properties: {
      kind: { enum: ['pod', 'deployment'], description: 'what to describe' },
      namespace: { type: 'string', minLength: 1, maxLength: 63 },
      name: nameProperty,
    },
    required: ['kind', 'namespace', 'name'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    const namespace = args['namespace'] as string;
    const name = args['name'] as string;
    const kind = args['kind'] as 'pod' | 'deployment';
    const object =
      kind === 'pod'
        ? podView(await kubeCall(apis, ctx.signal, () => apis.core.readNamespacedPod({ namespace, name })))
        : deploymentView(await kubeCall(apis, ctx.signal, () => apis.apps.readNamespacedDeployment({ namespace, name })));
    const events = await kubeCall(apis, ctx.signal, () =>
      apis.core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.name=${name},involvedObject.kind=${kind === 'pod' ? 'Pod' : 'Deployment'}`,
        limit: 100,
      }),
    );
    const lastSeen = (event: Record<string, unknown>): string => (event['last_seen'] as string | null) ?? '';
    const newestLast = events.items.map(eventView).sort((a, b) => lastSeen(a).localeCompare(lastSeen(b)));
    return { kind, ...object, events: newestLast };
  },
};
