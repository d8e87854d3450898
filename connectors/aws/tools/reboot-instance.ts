/** aws.reboot_instance: reboots one EC2 instance (write). */
import type { ConnectorTool } from '../../contract.js';
import { awsCall } from '../client.js';
import { regionOf, regionProperty, sessionOf } from './shared.js';
import { ec2Sdk } from '../sdk.js';

export const rebootInstanceTool: ConnectorTool = {
  name: 'reboot_instance',
  effect: 'write',
  description:
    'Reboot one EC2 instance (RebootInstances: an OS restart on the same host, keeping its volumes and addresses). ' +
    'Use it for a hung instance; it returns once EC2 accepted the request, the reboot itself takes a few minutes.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      instance_id: { type: 'string', pattern: '^i-[0-9a-f]{8,17}$' },
    },
    required: ['instance_id'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const region = regionOf(session, args);
    const instanceId = args['instance_id'] as string;
    const ec2 = session.client(ec2Sdk().EC2Client, region);
    await awsCall('EC2', ctx.signal, (options) => ec2.send(new (ec2Sdk().RebootInstancesCommand)({ InstanceIds: [instanceId] }), options));
    return { instance_id: instanceId, region, reboot_requested: true };
  },
};
