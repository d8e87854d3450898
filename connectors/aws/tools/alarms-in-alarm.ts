/** aws.alarms_in_alarm: the CloudWatch metric alarms firing now. */
import type { ConnectorTool } from '../../contract.js';
import { alarmView } from '../present.js';
import { readAlarms } from '../read.js';
import { limitProperty, listAcrossRegions, regionProperty, sessionOf } from './shared.js';

export const alarmsInAlarmTool: ConnectorTool = {
  name: 'alarms_in_alarm',
  effect: 'read',
  description:
    'List the CloudWatch metric alarms currently in state ALARM: the reason CloudWatch gives, since when, the metric ' +
    '(namespace, name, dimensions such as InstanceId or ServiceName), the threshold and comparison. Start here to see what is firing.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      name_prefix: { type: 'string', minLength: 1, maxLength: 255, description: 'only alarms whose name starts with this' },
      limit: limitProperty(500, 100),
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    return listAcrossRegions(
      session,
      args,
      (region) => readAlarms(session, region, ctx.signal, args['limit'] as number, 'ALARM', args['name_prefix'] as string | undefined),
      alarmView,
    );
  },
};
