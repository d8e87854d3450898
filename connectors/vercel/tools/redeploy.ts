/** vercel.redeploy (write): builds a deployment's source again as a new deployment. */
import type { ConnectorTool } from '../../contract.js';
import { isoOf } from '../config.js';
import { DEPLOYMENT_ARG, withVercel } from './shared.js';

interface CreatedDeployment {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly readyState?: string;
  readonly status?: string;
  readonly target?: string | null;
  readonly createdAt?: number;
  readonly inspectorUrl?: string | null;
}

interface ExistingDeployment {
  readonly id: string;
  readonly name: string;
  readonly target?: string | null;
}

export const redeployTool: ConnectorTool = {
  name: 'redeploy',
  effect: 'write',
  description:
    'Redeploy: start a new Vercel deployment from the same source as an existing one (same commit and settings), e.g. to retry a failed build or pick up changed environment variables. ' +
    "The target defaults to the original deployment's target. Returns the new deployment (id, url, state QUEUED/BUILDING) to follow with list_deployments.",
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['deployment'],
    properties: {
      deployment: DEPLOYMENT_ARG,
      target: { enum: ['production', 'preview'], description: 'where the new deployment goes (default: the original target)' },
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const original = await api.get<ExistingDeployment>(`/v13/deployments/${encodeURIComponent(args['deployment'] as string)}`, ctx.signal);
      const target = (args['target'] as string | undefined) ?? original.target ?? undefined;
      ctx.signal.throwIfAborted();
      const created = await api.post<CreatedDeployment>(
        '/v13/deployments',
        ctx.signal,
        { name: original.name, deploymentId: original.id, ...(target ? { target } : {}) },
        { forceNew: 1 },
      );
      return {
        id: created.id,
        redeploy_of: original.id,
        project: created.name,
        url: `https://${created.url}`,
        state: created.readyState ?? created.status ?? null,
        target: created.target ?? 'preview',
        created_at: isoOf(created.createdAt),
        inspector_url: created.inspectorUrl ?? null,
      };
    }),
};
