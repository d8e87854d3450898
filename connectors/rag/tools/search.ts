/** rag.search: the chunks of the realm's documents most relevant to a question (vector + BM25, fused). */
import { portOf, type ConnectorTool } from '../../contract.js';

/** the most chunks one search answers */
const MAX_K = 20;

export function searchTool(): ConnectorTool {
  return {
    name: 'search',
    effect: 'read',
    description:
      "Search the organization's documents (runbooks, READMEs, postmortems, tickets) in this realm for passages that answer a question. " +
      'Hybrid retrieval: semantic similarity and keyword (BM25) relevance, fused. ' +
      'Returns `items` best first, each with chunk_id, document, heading_path, text and score. Cite the chunk_id of every passage your answer uses, e.g. [chk_12].',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 2000, description: 'the question or the words to look for' },
        collection: { type: 'string', minLength: 1, maxLength: 200, description: 'only this collection (id or name)' },
        k: { type: 'integer', minimum: 1, maximum: MAX_K, default: 5, description: 'how many chunks at most' },
        filters: {
          type: 'object',
          additionalProperties: { type: 'string', maxLength: 500 },
          maxProperties: 16,
          description: 'document metadata that must match exactly, e.g. {"team": "payments"}',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      ctx.signal.throwIfAborted();
      const hits = await portOf(ctx, 'rag').search({
        query: args['query'] as string,
        collection: args['collection'] as string | undefined,
        k: (args['k'] as number | undefined) ?? 5,
        filters: args['filters'] as Record<string, string> | undefined,
      });
      return { items: hits };
    },
  };
}
