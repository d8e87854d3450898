/** grafana.list_datasources: the data sources a query can target. */
import type { ConnectorTool } from '../../contract.js';
import { grafanaClient } from '../client.js';

interface DataSource {
  readonly uid: string;
  readonly name: string;
  readonly type: string;
  readonly isDefault: boolean;
}

export const listDatasourcesTool: ConnectorTool = {
  name: 'list_datasources',
  effect: 'read',
  description: 'List the Grafana data sources (uid, name, type such as prometheus or loki, whether default). Use a uid with query_datasource.',
  input_schema: { type: 'object', properties: {}, additionalProperties: false },
  run: async (_args, ctx) => {
    ctx.signal.throwIfAborted();
    const { data } = await grafanaClient(ctx.config, ctx.net).json<DataSource[]>({ path: '/api/datasources', signal: ctx.signal });
    return { items: data.map((ds) => ({ uid: ds.uid, name: ds.name, type: ds.type, is_default: ds.isDefault })) };
  },
};
