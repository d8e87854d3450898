/** aws.list_auto_scaling_groups: Auto Scaling groups with their capacity and instances' health. */
import type { ConnectorTool } from '../../contract.js';
import { awsCall, readPages } from '../client.js';
import { autoScalingGroupView } from '../present.js';
import { limitProperty, listAcrossRegions, regionProperty, sessionOf } from './shared.js';
import { autoScalingSdk } from '../sdk.js';

export const listAutoScalingGroupsTool: ConnectorTool = {
  name: 'list_auto_scaling_groups',
  effect: 'read',
  description:
    'List EC2 Auto Scaling groups: min/max/desired capacity, how many instances are InService and how many unhealthy, ' +
    'each instance with its lifecycle state and health, and the group tags. Name groups to read only those.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      names: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 255 }, minItems: 1, maxItems: 50, description: 'only these groups' },
      limit: limitProperty(500, 100),
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const limit = args['limit'] as number;
    const groups = (region: string) => {
      const autoscaling = session.client(autoScalingSdk().AutoScalingClient, region);
      return readPages(limit, async (token) => {
        const answer = await awsCall('Auto Scaling', ctx.signal, (options) =>
          autoscaling.send(
            new (autoScalingSdk().DescribeAutoScalingGroupsCommand)({
              AutoScalingGroupNames: args['names'] as string[] | undefined,
              NextToken: token,
              MaxRecords: Math.min(limit, 100),
            }),
            options,
          ),
        );
        return { items: answer.AutoScalingGroups ?? [], next: answer.NextToken };
      });
    };
    return listAcrossRegions(session, args, groups, autoScalingGroupView);
  },
};
