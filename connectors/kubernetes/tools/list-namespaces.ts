/** kubernetes.list_namespaces: the cluster's namespaces, one page at a time. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis } from '../client.js';
import { namespaceView, pageOf } from '../present.js';
import { pagingProperties } from './schema.js';

export const listNamespacesTool: ConnectorTool = {
  name: 'list_namespaces',
  effect: 'read',
  description:
    'List the namespaces of the Kubernetes cluster (name, phase, creation time, labels). ' +
    'Paged: pass `next_continue` of the answer as `continue` to read the next page.',
  input_schema: { type: 'object', properties: { ...pagingProperties }, additionalProperties: false },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    const list = await kubeCall(apis, ctx.signal, () =>
      apis.core.listNamespace({ limit: args['limit'] as number, _continue: args['continue'] as string | undefined }),
    );
    return pageOf(list.items.map(namespaceView), list.metadata?._continue);
  },
};
