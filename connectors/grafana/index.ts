/**
 * The built-in `grafana` connector (dashboard system) over the Grafana HTTP
 * API: dashboards and their panels, firing alerts, data sources and queries.
 * A service-account token with the Viewer role is enough.
 */
import type { ConnectorPlugin } from '../contract.js';
import { validateGrafana } from './validate.js';
import { getDashboardTool } from './tools/get-dashboard.js';
import { listDatasourcesTool } from './tools/list-datasources.js';
import { listFiringAlertsTool } from './tools/list-firing-alerts.js';
import { queryDatasourceTool } from './tools/query-datasource.js';
import { searchDashboardsTool } from './tools/search-dashboards.js';

export function createGrafanaPlugin(): ConnectorPlugin {
  return {
    kind: 'grafana',
    version: '1.0.0',
    contract: '^1',
    description: 'Grafana: search dashboards, read their panels and queries, list firing alerts, query data sources.',
    configSchema: {
      type: 'object',
      properties: {
        base_url: { type: 'string', format: 'uri', description: 'the Grafana URL, e.g. https://grafana.example.com' },
        api_token: { type: 'string', minLength: 1, writeOnly: true, description: 'a service-account token (Viewer role is enough)' },
      },
      required: ['base_url', 'api_token'],
      additionalProperties: false,
    },
    validate: validateGrafana,
    tools: [searchDashboardsTool, getDashboardTool, listFiringAlertsTool, listDatasourcesTool, queryDatasourceTool],
  };
}
