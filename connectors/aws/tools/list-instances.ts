/** aws.list_instances: EC2 instances of the source's regions, filtered by state and tags. */
import type { Filter } from '@aws-sdk/client-ec2';
import type { ConnectorTool } from '../../contract.js';
import { instanceView } from '../present.js';
import { readInstances } from '../read.js';
import { limitProperty, listAcrossRegions, regionProperty, sessionOf } from './shared.js';

const STATES = ['pending', 'running', 'shutting-down', 'terminated', 'stopping', 'stopped'] as const;

export const listInstancesTool: ConnectorTool = {
  name: 'list_instances',
  effect: 'read',
  description:
    "List EC2 instances (id, Name tag, state, type, zone, private/public IP, launch time, tags) in one region or all of the source's regions. " +
    'Filter by state (`running`, `stopped`, ...), by tags (`{"service": "checkout"}`) or by instance ids.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      state: { type: 'array', items: { enum: [...STATES] }, minItems: 1, uniqueItems: true, description: 'only instances in these states' },
      tags: {
        type: 'object',
        additionalProperties: { type: 'string', minLength: 1, maxLength: 256 },
        maxProperties: 10,
        description: 'only instances carrying every one of these tags with that value',
      },
      instance_ids: { type: 'array', items: { type: 'string', pattern: '^i-[0-9a-f]{8,17}$' }, minItems: 1, maxItems: 100 },
      limit: limitProperty(1000, 100),
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const filters: Filter[] = [];
    if (Array.isArray(args['state'])) filters.push({ Name: 'instance-state-name', Values: args['state'] as string[] });
    for (const [key, value] of Object.entries((args['tags'] as Record<string, string> | undefined) ?? {}))
      filters.push({ Name: `tag:${key}`, Values: [value] });
    const ids = args['instance_ids'] as string[] | undefined;
    return listAcrossRegions(session, args, (region) => readInstances(session, region, ctx.signal, args['limit'] as number, filters, ids), instanceView);
  },
};
