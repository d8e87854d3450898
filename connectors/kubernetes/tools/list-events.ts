/** kubernetes.list_events: recent events, warnings by default. */
import type { ConnectorTool } from '../../contract.js';
import { kubeCall, kubernetesApis } from '../client.js';
import { eventView, pageOf } from '../present.js';
import { nameProperty, namespaceProperty, pagingProperties } from './schema.js';

export const listEventsTool: ConnectorTool = {
  name: 'list_events',
  effect: 'read',
  description:
    'List cluster events of one namespace (or all): by default only warnings (failed scheduling, back-off restarting, failed probes, OOM kills). ' +
    'Narrow to one object with `object_name`. Each event has type, reason, message, object (`Kind/name`), count and last_seen. ' +
    'Paged: pass `next_continue` of the answer as `continue` to read the next page.',
  input_schema: {
    type: 'object',
    properties: {
      namespace: namespaceProperty,
      type: { enum: ['Warning', 'Normal', 'all'], default: 'Warning', description: 'which events' },
      object_name: { ...nameProperty, description: 'only events about the object with this name' },
      ...pagingProperties,
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const apis = kubernetesApis(ctx.config, ctx.net);
    const selectors: string[] = [];
    if (args['type'] !== 'all') selectors.push(`type=${args['type'] as string}`);
    if (args['object_name'] !== undefined) selectors.push(`involvedObject.name=${args['object_name'] as string}`);
    const namespace = args['namespace'] as string | undefined;
    const query = {
      fieldSelector: selectors.length > 0 ? selectors.join(',') : undefined,
      limit: args['limit'] as number,
      _continue: args['continue'] as string | undefined,
    };
    const list = await kubeCall(apis, ctx.signal, () =>
      namespace === undefined ? apis.core.listEventForAllNamespaces(query) : apis.core.listNamespacedEvent({ namespace, ...query }),
    );
    return pageOf(list.items.map(eventView), list.metadata?._continue);
  },
};
