/** graph.search: nodes whose text matches a query, best first. */
import { portOf, type ConnectorTool } from '../../contract.js';

export function searchTool(): ConnectorTool {
  return {
    name: 'search',
    effect: 'read',
    description:
      'Find nodes of the context graph (services, repositories, teams, deployments, ...) by words in their text properties. ' +
      'Ranked full-text search; optionally only some labels. Returns `items` best first, each with id (Label:key), label, key, properties and score, and `total`. ' +
      'Use it first to find the id of a thing named in the question, then graph.expand or graph.get.',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'words to look for' },
        labels: {
          type: 'array',
          items: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' },
          maxItems: 50,
          description: 'only nodes with these labels, e.g. ["Service"]',
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'how many nodes at most' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    run: (args, ctx) =>
      portOf(ctx, 'graph').search({
        query: args['query'] as string,
        limit: (args['limit'] as number | undefined) ?? 10,
        labels: args['labels'] as string[] | undefined,
      }),
  };
}
