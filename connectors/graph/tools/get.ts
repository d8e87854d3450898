/** graph.get: one node by id. */
import { ToolError, type ConnectorTool } from '../../contract.js';
import type { GraphStore } from '../../../runtime/graph/store.js';
import { asTool, NODE_ID_SCHEMA, nodeRef, scopeOf } from './scope.js';

export function getTool(graph: GraphStore): ConnectorTool {
  return {
    name: 'get',
    effect: 'read',
    description: 'Get one node of the context graph by its id (Label:key, e.g. Service:payments-api). Returns id, label, key and all its properties.',
    input_schema: { type: 'object', properties: { id: NODE_ID_SCHEMA }, required: ['id'], additionalProperties: false },
    run: (args, ctx) =>
      asTool(async () => {
        const { label, key } = nodeRef(args['id']);
        const node = await graph.getNode(scopeOf(ctx), label, key);
        if (!node) throw new ToolError('not_found', `no node ${String(args['id'])} in this realm; find ids with graph.search`);
        return node;
      }),
  };
}
