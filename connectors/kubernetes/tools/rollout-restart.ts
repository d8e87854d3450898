/** kubernetes.rollout_restart: restarts a deployment's pods the way `kubectl rollout restart` does. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis, kubernetesLibrary } from '../client.js';
import { deploymentView } from '../present.js';
import { nameProperty } from './schema.js';

const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

export const rolloutRestartTool: ConnectorTool = {
  name: 'rollout_restart',
  effect: 'write',
  description:
    'Restart every pod of a deployment with a rolling update (what `kubectl rollout restart deployment/<name>` does: ' +
    'it stamps the pod template with a `kubectl.kubernetes.io/restartedAt` annotation). Use it for a stuck or leaking service; ' +
    'returns the deployment after the patch.',
  input_schema: {
    type: 'object',
    properties: {
      namespace: { type: 'string', minLength: 1, maxLength: 63 },
      deployment: { ...nameProperty, description: 'the deployment name' },
    },
    required: ['namespace', 'deployment'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    // kubectl writes RFC 3339 seconds precision
    // wall clock: the restartedAt annotation is read by the cluster (kubectl writes the same)
    const restartedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const { PatchStrategy, setHeaderOptions } = kubernetesLibrary();
    const body = { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } } };
    const patched = await kubeCall(apis, ctx.signal, () =>
      apis.apps.patchNamespacedDeployment(
        { namespace: args['namespace'] as string, name: args['deployment'] as string, body },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    return { restarted_at: restartedAt, deployment: deploymentView(patched) };
  },
};
