/** vercel.failed_deployments: deployments that failed, each with its error and the end of its build log. */
import type { ConnectorTool } from '../../contract.js';
import { buildLogTail, listDeployments, presentDeployment } from '../deployments.js';
import { limitArg, PROJECT_ARG, withVercel } from './shared.js';

interface DeploymentDetail {
  readonly errorCode?: string | null;
  readonly errorMessage?: string | null;
  readonly errorStep?: string | null;
}

export const failedDeploymentsTool: ConnectorTool = {
  name: 'failed_deployments',
  effect: 'read',
  description:
    'The most recent failed (ERROR) Vercel deployments, optionally of one project or target, each with the error Vercel reports and the last lines of its build log: use it to explain why a deploy broke. ' +
    'Returns `items` with the deployment fields plus error_code, error_message and log_tail.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project: PROJECT_ARG,
      target: { enum: ['production', 'preview'] },
      limit: limitArg(5, 25),
      log_lines: { type: 'integer', minimum: 0, maximum: 500, default: 40, description: 'build log lines per deployment (0: none)' },
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const { items } = await listDeployments(
        api,
        ctx.signal,
        {
          state: 'ERROR',
          ...(typeof args['project'] === 'string' ? { project: args['project'] } : {}),
          ...(typeof args['target'] === 'string' ? { target: args['target'] as 'production' | 'preview' } : {}),
        },
        args['limit'] as number,
      );
      const logLines = args['log_lines'] as number;
      const failed = [];
      for (const deployment of items) {
        const detail = await api.get<DeploymentDetail>(`/v13/deployments/${encodeURIComponent(deployment.uid)}`, ctx.signal);
        failed.push({
          ...presentDeployment(deployment),
          error_code: detail.errorCode ?? null,
          error_message: detail.errorMessage ?? null,
          error_step: detail.errorStep ?? null,
          log_tail: logLines > 0 ? await buildLogTail(api, ctx.signal, deployment.uid, logLines) : [],
        });
      }
      return { items: failed };
    }),
};
