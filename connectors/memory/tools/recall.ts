/** memory.recall: the organization's memory entries most relevant to a query, weighted by importance. */
import { MEMORY_KINDS, portOf, type ConnectorTool, type MemoryKind } from '../../contract.js';
import { MAX_RECALL_LIMIT } from '../limits.js';
import { requireRealm } from '../realm-check.js';

export function recallTool(): ConnectorTool {
  return {
    name: 'recall',
    effect: 'read',
    description:
      'Recall what the organization has stored in memory (facts, guidelines, preferences, notes) that is relevant to a query. ' +
      'Full-text search ranked by relevance and importance; optionally limited to one realm or kind. ' +
      "Returns `items` best first, each with id, kind, realm, title, text, tags, importance and score. Use it before answering questions about the organization's conventions or past decisions.",
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'words to look for' },
        realm: { type: 'string', minLength: 1, maxLength: 100, description: 'only entries of this realm' },
        kind: { enum: [...MEMORY_KINDS], description: 'only entries of this kind' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_RECALL_LIMIT, default: 10, description: 'how many entries at most' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      ctx.signal.throwIfAborted();
      const memory = portOf(ctx, 'memory');
      const realm = args['realm'] as string | undefined;
      if (realm !== undefined) await requireRealm(memory, realm);
      const recalled = await memory.recall({
        query: args['query'] as string,
        realm,
        kind: args['kind'] as MemoryKind | undefined,
        limit: (args['limit'] as number | undefined) ?? 10,
      });
      return {
        items: recalled.map(({ entry, score }) => ({
          id: entry.id,
          kind: entry.kind,
          realm: entry.realm,
          title: entry.title,
          text: entry.text,
          tags: entry.tags,
          importance: entry.importance,
          score,
        })),
      };
    },
  };
}
