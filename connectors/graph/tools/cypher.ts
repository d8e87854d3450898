/** graph.cypher: a read-only Cypher query over the run's realm. */
import { portOf, type ConnectorTool } from '../../contract.js';

export function cypherTool(): ConnectorTool {
  return {
    name: 'cypher',
    effect: 'read',
    description:
      'Run a read-only Cypher query over the context graph (Kùzu dialect), for questions search and expand cannot answer (counts, paths, filters). ' +
      'Nodes have a label and a `_key` property, e.g. MATCH (s:Service)-[:DEPENDS_ON]->(t:Service {_key: $key}) RETURN s._key. ' +
      'Pass values as `params` ($name in the query). A query that writes is refused, as are files (LOAD FROM, COPY), other databases, settings and schema changes. ' +
      'Returns `columns` and `rows` (objects keyed by column).',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 10000, description: 'one Cypher statement' },
        params: { type: 'object', description: 'query parameters (at most 16 levels deep)' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    run: (args, ctx) => portOf(ctx, 'graph').cypher(args['query'] as string, (args['params'] as Record<string, unknown> | undefined) ?? {}),
  };
}
