/** aws.set_alarm_state: sets a CloudWatch alarm's state by hand (write). */
import type { StateValue } from '@aws-sdk/client-cloudwatch';
import type { ConnectorTool } from '../../contract.js';
import { awsCall } from '../client.js';
import { regionOf, regionProperty, sessionOf } from './shared.js';
import { cloudWatchSdk } from '../sdk.js';

export const setAlarmStateTool: ConnectorTool = {
  name: 'set_alarm_state',
  effect: 'write',
  description:
    "Set a CloudWatch alarm's state (SetAlarmState): e.g. back to OK once an incident is handled, or to ALARM to test its actions. " +
    'The alarm returns to its real state at its next evaluation; its actions run on the change.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      alarm_name: { type: 'string', minLength: 1, maxLength: 255 },
      state: { enum: ['OK', 'ALARM', 'INSUFFICIENT_DATA'] },
      reason: { type: 'string', minLength: 1, maxLength: 1023, description: 'why, recorded in the alarm history' },
    },
    required: ['alarm_name', 'state', 'reason'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const region = regionOf(session, args);
    const cloudwatch = session.client(cloudWatchSdk().CloudWatchClient, region);
    await awsCall('CloudWatch', ctx.signal, (options) =>
      cloudwatch.send(
        new (cloudWatchSdk().SetAlarmStateCommand)({
          AlarmName: args['alarm_name'] as string,
          StateValue: args['state'] as StateValue,
          StateReason: args['reason'] as string,
        }),
        options,
      ),
    );
    return { alarm_name: args['alarm_name'], region, state: args['state'] };
  },
};
