/** vercel.build_logs: the build output of one deployment. */
import type { ConnectorTool } from '../../contract.js';
import { buildLogTail } from '../deployments.js';
import { DEPLOYMENT_ARG, withVercel } from './shared.js';

export const buildLogsTool: ConnectorTool = {
  name: 'build_logs',
  effect: 'read',
  description: "The last lines of a Vercel deployment's build log (commands, stdout and stderr of the build), to see why a build failed or what it did.",
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['deployment'],
    properties: {
      deployment: DEPLOYMENT_ARG,
      lines: { type: 'integer', minimum: 1, maximum: 2000, default: 100, description: 'how many lines from the end' },
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => ({
      deployment: args['deployment'],
      lines: await buildLogTail(api, ctx.signal, args['deployment'] as string, args['lines'] as number),
    })),
};
