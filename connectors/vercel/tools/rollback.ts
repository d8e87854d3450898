/** vercel.rollback (write): points a project's production domains back at an earlier deployment. */
import type { ConnectorTool } from '../../contract.js';
import { DEPLOYMENT_ARG, PROJECT_ARG, withVercel } from './shared.js';

export const rollbackTool: ConnectorTool = {
  name: 'rollback',
  effect: 'write',
  description:
    "Instant rollback: point a Vercel project's production domains at an earlier production deployment (no rebuild), e.g. after a bad release. " +
    'Pick the deployment with list_deployments (target production, state READY). Automatic production deploys stay paused until a deployment is promoted again.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['project', 'deployment'],
    properties: {
      project: PROJECT_ARG,
      deployment: { ...DEPLOYMENT_ARG, description: 'the deployment id (dpl_...) to roll back to' },
      description: { type: 'string', minLength: 1, maxLength: 500, description: 'why (shown in the Vercel dashboard)' },
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const project = args['project'] as string;
      const deployment = args['deployment'] as string;
      ctx.signal.throwIfAborted();
      // POST /v1/projects/:projectId/rollback/:deploymentId answers 201 with no body
      await api.post<null>(`/v1/projects/${encodeURIComponent(project)}/rollback/${encodeURIComponent(deployment)}`, ctx.signal, undefined, {
        description: args['description'] as string | undefined,
      });
      return { project, rolled_back_to: deployment, requested: true };
    }),
};
