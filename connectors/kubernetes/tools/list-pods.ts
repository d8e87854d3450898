/** kubernetes.list_pods: pods with phase, readiness and restart counts. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis } from '../client.js';
import { pageOf, podView } from '../present.js';
import { namespaceProperty, pagingProperties } from './schema.js';

export const listPodsTool: ConnectorTool = {
  name: 'list_pods',
  effect: 'read',
  description:
    'List pods of one namespace (or all) with their phase, ready containers ("1/2"), total restarts, node, owner and per-container state ' +
    '(waiting reasons such as CrashLoopBackOff or ImagePullBackOff). Filter with a label selector (`app=web`). ' +
    'Paged: pass `next_continue` of the answer as `continue` to read the next page.',
  input_schema: {
    type: 'object',
    properties: {
      namespace: namespaceProperty,
      label_selector: { type: 'string', minLength: 1, maxLength: 1000, description: 'e.g. `app=web,tier!=cache`' },
      ...pagingProperties,
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    const namespace = args['namespace'] as string | undefined;
    const query = {
      labelSelector: args['label_selector'] as string | undefined,
      limit: args['limit'] as number,
      _continue: args['continue'] as string | undefined,
    };
    const list = await kubeCall(apis, ctx.signal, () =>
      namespace === undefined ? apis.core.listPodForAllNamespaces(query) : apis.core.listNamespacedPod({ namespace, ...query }),
    );
    return pageOf(list.items.map(podView), list.metadata?._continue);
  },
};
