/** grafana.search_dashboards: dashboards by title words and tags, paged like /api/search. */
import type { ConnectorTool } from '../../contract.js';
import { grafanaClient } from '../client.js';

interface SearchHit {
  readonly uid: string;
  readonly title: string;
  readonly url: string;
  readonly tags: string[];
  readonly folderTitle?: string;
  readonly type: string;
}

export const searchDashboardsTool: ConnectorTool = {
  name: 'search_dashboards',
  effect: 'read',
  description:
    'Search Grafana dashboards by words of their title and/or by tags. Returns `items` (uid, title, url, tags, folder) and `next_page` ' +
    '(pass it as `page` for more; null on the last page). Use the uid with get_dashboard to see its panels and queries.',
  input_schema: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 200, description: 'words of the title; omit to list all' },
      tags: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 10, description: 'dashboards carrying all these tags' },
      page: { type: 'integer', minimum: 1, default: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const page = args['page'] as number;
    const limit = args['limit'] as number;
    const { data } = await grafanaClient(ctx.config, ctx.net).json<SearchHit[]>({
      path: '/api/search',
      query: { type: 'dash-db', query: args['query'] as string | undefined, tag: args['tags'] as string[] | undefined, page, limit },
      signal: ctx.signal,
    });
    return {
      items: data.map((hit) => ({ uid: hit.uid, title: hit.title, url: hit.url, tags: hit.tags, folder: hit.folderTitle ?? null })),
      page,
      next_page: data.length === limit ? page + 1 : null,
    };
  },
};
