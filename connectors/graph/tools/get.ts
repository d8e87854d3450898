/** graph.get: one node by id. */
import { portOf, ToolError, type ConnectorTool } from '../../contract.js';
import { NODE_ID_SCHEMA } from './node-id.js';

export function getTool(): ConnectorTool {
  return {
    name: 'get',
    effect: 'read',
    description: 'Get one node of the context graph by its id (Label:key, e.g. Service:payments-api). Returns id, label, key and all its properties.',
    input_schema: { type: 'object', properties: { id: NODE_ID_SCHEMA }, required: ['id'], additionalProperties: false },
    run: async (args, ctx) => {
      const node = await portOf(ctx, 'graph').getNode(String(args['id']));
      if (!node) throw new ToolError('not_found', `no node ${String(args['id'])} in this realm; find ids with graph.search`);
      return node;
    },
  };
}
