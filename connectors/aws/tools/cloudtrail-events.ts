/** aws.cloudtrail_events: recent CloudTrail management events about one resource. */
import type { ConnectorTool } from '../../contract.js';
import { awsCall, readPages } from '../client.js';
import { trailEventView } from '../present.js';
import { regionOf, regionProperty, sessionOf } from './shared.js';
import { cloudTrailSdk } from '../sdk.js';

export const cloudtrailEventsTool: ConnectorTool = {
  name: 'cloudtrail_events',
  effect: 'read',
  description:
    'Who did what to a resource recently: CloudTrail management events (API calls such as StopInstances, UpdateService, ' +
    'PutMetricAlarm) whose resource name is `resource_name` (an instance id, a service or function name, an alarm name), newest first, ' +
    'with the caller and the event source. Use it to find the change behind an incident.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      resource_name: { type: 'string', minLength: 1, maxLength: 2048, description: 'e.g. i-0abc..., checkout, arn:aws:ecs:...' },
      hours: { type: 'integer', minimum: 1, maximum: 2160, default: 24, description: 'how far back (CloudTrail keeps 90 days)' },
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    },
    required: ['resource_name'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const region = regionOf(session, args);
    // wall clock: CloudTrail windows are the provider's real time
    const end = new Date();
    const start = new Date(end.getTime() - (args['hours'] as number) * 3_600_000);
    const limit = args['limit'] as number;
    const cloudtrail = session.client(cloudTrailSdk().CloudTrailClient, region);
    const read = await readPages(limit, async (token) => {
      const answer = await awsCall('CloudTrail', ctx.signal, (options) =>
        cloudtrail.send(
          new (cloudTrailSdk().LookupEventsCommand)({
            LookupAttributes: [{ AttributeKey: 'ResourceName', AttributeValue: args['resource_name'] as string }],
            StartTime: start,
            EndTime: end,
            MaxResults: Math.min(limit, 50),
            NextToken: token,
          }),
          options,
        ),
      );
      return { items: answer.Events ?? [], next: answer.NextToken };
    });
    return { region, items: read.items.map(trailEventView), truncated: read.truncated };
  },
};
