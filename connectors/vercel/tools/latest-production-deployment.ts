/** vercel.latest_production_deployment: what a project serves in production now, and its newest production attempt. */
import type { ConnectorTool } from '../../contract.js';
import { listDeployments, presentDeployment } from '../deployments.js';
import { PROJECT_ARG, withVercel } from './shared.js';

export const latestProductionDeploymentTool: ConnectorTool = {
  name: 'latest_production_deployment',
  effect: 'read',
  description:
    "A Vercel project's production state: `current` is the newest READY production deployment (what users get), `latest` the newest production deployment in any state (it may be building or have failed). " +
    '`latest_failed` is true when the newest attempt did not reach READY. Each is null when there is none.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['project'],
    properties: { project: PROJECT_ARG },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const project = args['project'] as string;
      const latest = (await listDeployments(api, ctx.signal, { project, target: 'production' }, 1)).items[0];
      const current =
        latest && (latest.state ?? latest.readyState) === 'READY'
          ? latest
          : (await listDeployments(api, ctx.signal, { project, target: 'production', state: 'READY' }, 1)).items[0];
      const latestState = latest ? (latest.state ?? latest.readyState ?? null) : null;
      return {
        project,
        current: current ? presentDeployment(current) : null,
        latest: latest ? presentDeployment(latest) : null,
        latest_failed: latestState === 'ERROR' || latestState === 'CANCELED',
      };
    }),
};
