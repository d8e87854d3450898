/** grafana.list_firing_alerts: Grafana-managed alerts that are firing now (its Alertmanager API). */
import type { ConnectorTool } from '../../contract.js';
import { grafanaClient } from '../client.js';

interface GettableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly fingerprint: string;
  readonly generatorURL?: string;
  readonly status: { state: string; silencedBy: string[]; inhibitedBy: string[] };
}

export const listFiringAlertsTool: ConnectorTool = {
  name: 'list_firing_alerts',
  effect: 'read',
  description:
    'List the Grafana-managed alerts firing now (not silenced or inhibited unless asked): alert name, labels (severity, service...), ' +
    'summary/description annotations, since when, and a link to the rule. Narrow with label matchers such as `severity="critical"`.',
  input_schema: {
    type: 'object',
    properties: {
      matchers: {
        type: 'array',
        items: { type: 'string', minLength: 3, maxLength: 200 },
        maxItems: 10,
        description: 'Alertmanager label matchers, e.g. `severity="critical"`, `service=~"api|web"`',
      },
      include_silenced: { type: 'boolean', default: false },
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const includeSilenced = args['include_silenced'] as boolean;
    const { data } = await grafanaClient(ctx.config, ctx.net).json<GettableAlert[]>({
      path: '/api/alertmanager/grafana/api/v2/alerts',
      query: { active: true, silenced: includeSilenced, inhibited: includeSilenced, filter: args['matchers'] as string[] | undefined },
      signal: ctx.signal,
    });
    const alerts = data.filter((alert) => alert.status.state === 'active' || includeSilenced);
    return {
      count: alerts.length,
      alerts: alerts.map((alert) => ({
        name: alert.labels['alertname'] ?? null,
        state: alert.status.state,
        labels: alert.labels,
        summary: alert.annotations['summary'] ?? null,
        description: alert.annotations['description'] ?? null,
        since: alert.startsAt,
        fingerprint: alert.fingerprint,
        url: alert.generatorURL ?? null,
      })),
    };
  },
};
