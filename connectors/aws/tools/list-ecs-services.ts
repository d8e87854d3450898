/** aws.list_ecs_services: ECS services with their deployments and task counts. */
import type { ConnectorTool } from '../../contract.js';
import { ecsServiceView } from '../present.js';
import { readEcsServices } from '../read.js';
import { limitProperty, listAcrossRegions, regionProperty, sessionOf } from './shared.js';

export const listEcsServicesTool: ConnectorTool = {
  name: 'list_ecs_services',
  effect: 'read',
  description:
    'List ECS services of one cluster (or of every cluster) with desired/running/pending task counts, the task definition, ' +
    'each deployment (PRIMARY / ACTIVE, rollout state, failed tasks) and the newest service events (why tasks fail to start). ' +
    'A deployment stuck IN_PROGRESS with failed tasks is a failing rollout.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      cluster: { type: 'string', minLength: 1, maxLength: 255, description: 'the cluster name or ARN; omit for every cluster' },
      limit: limitProperty(500, 100),
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    return listAcrossRegions(
      session,
      args,
      (region) => readEcsServices(session, region, ctx.signal, args['limit'] as number, args['cluster'] as string | undefined),
      ecsServiceView,
    );
  },
};
