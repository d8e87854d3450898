/** memory.recall: the organization's memory entries most relevant to a query, weighted by importance. */
import type { ConnectorTool } from '../../contract.js';
import type { MemoryKind } from '../../../domains/memory/documents.js';
import { asOrgId } from '../../../runtime/store/types.js';
import { requireRealm } from '../realm-check.js';
import { recallMemories } from '../../../domains/memory/recall.js';
import { MEMORY_KINDS } from '../../../domains/memory/documents.js';
import { MAX_RECALL_LIMIT } from '../../../domains/memory/recall.js';
import type { MemoryPluginStores } from '../stores.js';

export function recallTool(stores: MemoryPluginStores): ConnectorTool {
  return {
    name: 'recall',
    effect: 'read',
    description:
      'Recall what the organization has stored in memory (facts, guidelines, preferences, notes) that is relevant to a query. ' +
      'Full-text search ranked by relevance and importance; optionally limited to one realm or kind. ' +
      'Returns `items` best first, each with id, kind, realm, title, text, tags, importance and score. Use it before answering questions about the organization\'s conventions or past decisions.',
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
      const org = asOrgId(ctx.orgId);
      const realm = args['realm'] as string | undefined;
      if (realm !== undefined) await requireRealm(stores, org, realm);
      const recalled = await recallMemories(stores.memory, org, {
        query: args['query'] as string,
        realm,
        kind: args['kind'] as MemoryKind | undefined,
        limit: (args['limit'] as number | undefined) ?? 10,
      });
      return {
        items: recalled.map(({ doc, score }) => ({
          id: doc.id,
          kind: doc.kind,
          realm: doc.realm,
          title: doc.title,
          text: doc.text,
          tags: doc.tags,
          importance: doc.importance,
          score,
        })),
      };
    },
  };
}
