/** vercel.list_deployments: recent deployments, by project, target and state. */
import type { ConnectorTool } from '../../contract.js';
import { listDeployments, presentDeployment } from '../deployments.js';
import { limitArg, PROJECT_ARG, withVercel } from './shared.js';

const STATES = ['READY', 'ERROR', 'BUILDING', 'QUEUED', 'INITIALIZING', 'CANCELED'] as const;

export const listDeploymentsTool: ConnectorTool = {
  name: 'list_deployments',
  effect: 'read',
  description:
    'List Vercel deployments newest first, optionally of one project, one target (production or preview), in one state (READY, ERROR, BUILDING, QUEUED, INITIALIZING, CANCELED) or since a time. ' +
    'Returns `items` with id, project, url, state, target, creation and ready times, creator, Git branch, commit sha and message, and the inspector url.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project: PROJECT_ARG,
      target: { enum: ['production', 'preview'] },
      state: { enum: [...STATES] },
      since: { type: 'string', format: 'date-time', description: 'only deployments created after this time (ISO 8601)' },
      limit: limitArg(20, 500),
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const since = typeof args['since'] === 'string' ? Date.parse(args['since']) : undefined;
      const { items, truncated } = await listDeployments(
        api,
        ctx.signal,
        {
          ...(typeof args['project'] === 'string' ? { project: args['project'] } : {}),
          ...(typeof args['target'] === 'string' ? { target: args['target'] as 'production' | 'preview' } : {}),
          ...(typeof args['state'] === 'string' ? { state: args['state'] } : {}),
          ...(since === undefined ? {} : { since }),
        },
        args['limit'] as number,
      );
      return { items: items.map(presentDeployment), truncated };
    }),
};
