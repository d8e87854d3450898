/** aws.scale_ecs_service: sets an ECS service's desired task count (write). */
import { ToolError, type ConnectorTool } from '../../contract.js';
import { awsCall } from '../client.js';
import { ecsServiceView } from '../present.js';
import { regionOf, regionProperty, sessionOf } from './shared.js';
import { ecsSdk } from '../sdk.js';

export const scaleEcsServiceTool: ConnectorTool = {
  name: 'scale_ecs_service',
  effect: 'write',
  description:
    'Scale an ECS service: set its desired task count (UpdateService desiredCount). ECS then starts or stops tasks; ' +
    'returns the service as ECS answered (desired, running and pending counts, deployments).',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      cluster: { type: 'string', minLength: 1, maxLength: 255, description: 'the cluster name or ARN' },
      service: { type: 'string', minLength: 1, maxLength: 255, description: 'the service name or ARN' },
      desired_count: { type: 'integer', minimum: 0, maximum: 5000 },
    },
    required: ['cluster', 'service', 'desired_count'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const region = regionOf(session, args);
    const ecs = session.client(ecsSdk().ECSClient, region);
    const answer = await awsCall('ECS', ctx.signal, (options) =>
      ecs.send(
        new (ecsSdk().UpdateServiceCommand)({
          cluster: args['cluster'] as string,
          service: args['service'] as string,
          desiredCount: args['desired_count'] as number,
        }),
        options,
      ),
    );
    if (answer.service === undefined) throw new ToolError('upstream_error', 'ECS UpdateService answered without the service');
    return ecsServiceView(answer.service, region);
  },
};
