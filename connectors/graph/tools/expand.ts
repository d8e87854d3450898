/** graph.expand: the neighbourhood of a node. */
import { portOf, ToolError, type ConnectorTool } from '../../contract.js';
import { NODE_ID_SCHEMA } from './node-id.js';

export function expandTool(): ConnectorTool {
  return {
    name: 'expand',
    effect: 'read',
    description:
      'The subgraph around a node of the context graph: its neighbours up to `depth` hops and the relationships between them. ' +
      'Relationships point from -> to, e.g. (Service:checkout)-[DEPENDS_ON]->(Service:payments) means checkout depends on payments. ' +
      'To answer "what depends on service X", expand X with direction "in" and types ["DEPENDS_ON"]; "what does X depend on" is direction "out". ' +
      'Returns `nodes` (id, label, key, properties) and `relationships` (type, from, to, properties).',
    input_schema: {
      type: 'object',
      properties: {
        id: NODE_ID_SCHEMA,
        depth: { type: 'integer', minimum: 1, maximum: 5, default: 1, description: 'hops from the node' },
        direction: { enum: ['both', 'out', 'in'], default: 'both', description: 'out: relationships leaving the node; in: arriving at it' },
        types: {
          type: 'array',
          items: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' },
          maxItems: 50,
          description: 'only these relationship types',
        },
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'most nodes returned' },
      },
      required: ['id'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      const subgraph = await portOf(ctx, 'graph').expand(String(args['id']), {
        depth: (args['depth'] as number | undefined) ?? 1,
        direction: (args['direction'] as 'both' | 'out' | 'in' | undefined) ?? 'both',
        types: args['types'] as string[] | undefined,
        limit: (args['limit'] as number | undefined) ?? 100,
      });
      if (!subgraph) throw new ToolError('not_found', `no node ${String(args['id'])} in this realm; find ids with graph.search`);
      return subgraph;
    },
  };
}
