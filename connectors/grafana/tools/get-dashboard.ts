/** grafana.get_dashboard: a dashboard's panels with their queries and data sources. */
import type { ConnectorTool } from '../../contract.js';
import { grafanaClient } from '../client.js';

interface Panel {
  readonly id?: number;
  readonly type: string;
  readonly title?: string;
  readonly description?: string;
  readonly datasource?: { type?: string; uid?: string } | string | null;
  readonly targets?: Record<string, unknown>[];
  readonly panels?: Panel[];
}

interface DashboardAnswer {
  readonly dashboard: { uid: string; title: string; tags?: string[]; version?: number; panels?: Panel[] };
  readonly meta: { url?: string; folderTitle?: string; updated?: string };
}

/** rows hold their panels when collapsed; flatten them, remembering the row */
function flatten(panels: readonly Panel[], row: string | null = null): { panel: Panel; row: string | null }[] {
  return panels.flatMap((panel) => (panel.type === 'row' ? flatten(panel.panels ?? [], panel.title ?? null) : [{ panel, row }]));
}

const datasourceOf = (ds: Panel['datasource']): string | null =>
  ds === undefined || ds === null ? null : typeof ds === 'string' ? ds : (ds.uid ?? ds.type ?? null);

export const getDashboardTool: ConnectorTool = {
  name: 'get_dashboard',
  effect: 'read',
  description:
    'Read one Grafana dashboard by uid: its title, tags, url and every panel (id, type, title, row, data source uid and the queries it runs, e.g. PromQL `expr`). ' +
    'Use a panel query with query_datasource to get the numbers behind it.',
  input_schema: {
    type: 'object',
    properties: { uid: { type: 'string', minLength: 1, maxLength: 40, description: 'the dashboard uid (from search_dashboards)' } },
    required: ['uid'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const uid = encodeURIComponent(args['uid'] as string);
    const { data } = await grafanaClient(ctx.config, ctx.net).json<DashboardAnswer>({ path: `/api/dashboards/uid/${uid}`, signal: ctx.signal });
    const { dashboard, meta } = data;
    return {
      uid: dashboard.uid,
      title: dashboard.title,
      tags: dashboard.tags ?? [],
      url: meta.url ?? null,
      folder: meta.folderTitle ?? null,
      version: dashboard.version ?? null,
      panels: flatten(dashboard.panels ?? []).map(({ panel, row }) => ({
        id: panel.id ?? null,
        type: panel.type,
        title: panel.title ?? '',
        row,
        datasource: datasourceOf(panel.datasource),
        queries: (panel.targets ?? []).map((target) => ({ ...target, datasource: datasourceOf(target['datasource'] as Panel['datasource']) })),
      })),
    };
  },
};
