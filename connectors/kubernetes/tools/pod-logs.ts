/** kubernetes.pod_logs: the tail of a container's log. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis } from '../client.js';
import { nameProperty } from './schema.js';

const MAX_LOG_BYTES = 256 * 1024;

export const podLogsTool: ConnectorTool = {
  name: 'pod_logs',
  effect: 'read',
  description:
    "Read the last lines of a pod's log (one container; name it when the pod has several). " +
    'Set `previous` to read the log of the previous, crashed instance of the container (after a restart). Returns `{ lines, text }`.',
  input_schema: {
    type: 'object',
    properties: {
      namespace: { type: 'string', minLength: 1, maxLength: 63, description: 'the namespace of the pod' },
      pod: { ...nameProperty, description: 'the pod name' },
      container: { type: 'string', minLength: 1, maxLength: 63, description: 'the container; required when the pod has several' },
      tail_lines: { type: 'integer', minimum: 1, maximum: 5000, default: 100, description: 'how many lines from the end' },
      previous: { type: 'boolean', default: false, description: 'the log of the previous (terminated) instance' },
    },
    required: ['namespace', 'pod'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    const text = await kubeCall(apis, ctx.signal, () =>
      apis.core.readNamespacedPodLog({
        namespace: args['namespace'] as string,
        name: args['pod'] as string,
        container: args['container'] as string | undefined,
        tailLines: args['tail_lines'] as number,
        previous: args['previous'] as boolean,
        // a few long lines must not flood the model's context
        limitBytes: MAX_LOG_BYTES,
      }),
    );
    const body = String(text);
    return { lines: body === '' ? 0 : body.replace(/\n$/, '').split('\n').length, text: body };
  },
};
