/** aws.metric_datapoints: one CloudWatch metric's datapoints over the last minutes. */
import type { Statistic } from '@aws-sdk/client-cloudwatch';
import type { ConnectorTool } from '../../contract.js';
import { awsCall } from '../client.js';
import { iso } from '../present.js';
import { regionOf, regionProperty, sessionOf } from './shared.js';
import { cloudWatchSdk } from '../sdk.js';

const STATISTICS = ['Average', 'Sum', 'Minimum', 'Maximum', 'SampleCount'] as const;
/** GetMetricStatistics answers at most 1440 datapoints */
const MAX_DATAPOINTS = 1440;

export const metricDatapointsTool: ConnectorTool = {
  name: 'metric_datapoints',
  effect: 'read',
  description:
    'Read one CloudWatch metric over the last `minutes` (e.g. namespace `AWS/EC2`, metric `CPUUtilization`, dimensions `{"InstanceId": "i-..."}`; ' +
    '`AWS/ECS` `CPUUtilization` with ClusterName and ServiceName; `AWS/Lambda` `Errors` with FunctionName). ' +
    'Returns the datapoints oldest first, one per `period_seconds`, with the chosen statistic. An alarm from `alarms_in_alarm` names its metric.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      namespace: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^:]+$', description: 'e.g. AWS/EC2' },
      metric_name: { type: 'string', minLength: 1, maxLength: 255 },
      dimensions: { type: 'object', additionalProperties: { type: 'string', minLength: 1, maxLength: 1024 }, maxProperties: 30, default: {} },
      statistic: { enum: [...STATISTICS], default: 'Average' },
      minutes: { type: 'integer', minimum: 1, maximum: 10080, default: 60, description: 'how far back (up to 7 days)' },
      period_seconds: { type: 'integer', minimum: 60, maximum: 86400, multipleOf: 60, default: 60, description: 'the width of one datapoint' },
    },
    required: ['namespace', 'metric_name'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const region = regionOf(session, args);
    const minutes = args['minutes'] as number;
    const statistic = args['statistic'] as Statistic;
    // a window that would exceed the datapoint cap gets a wider period instead of an API error
    const period = Math.max(args['period_seconds'] as number, Math.ceil((minutes * 60) / MAX_DATAPOINTS / 60) * 60);
    // wall clock: CloudWatch windows are the provider's real time
    const end = new Date();
    const start = new Date(end.getTime() - minutes * 60_000);
    const dimensions = Object.entries(args['dimensions'] as Record<string, string>).map(([Name, Value]) => ({ Name, Value }));
    const cloudwatch = session.client(cloudWatchSdk().CloudWatchClient, region);
    const answer = await awsCall('CloudWatch', ctx.signal, (options) =>
      cloudwatch.send(
        new (cloudWatchSdk().GetMetricStatisticsCommand)({
          Namespace: args['namespace'] as string,
          MetricName: args['metric_name'] as string,
          Dimensions: dimensions,
          StartTime: start,
          EndTime: end,
          Period: period,
          Statistics: [statistic],
        }),
        options,
      ),
    );
    const datapoints = (answer.Datapoints ?? [])
      .map((point) => ({ timestamp: iso(point.Timestamp), value: point[statistic] ?? null, unit: point.Unit ?? null }))
      .sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? ''));
    return {
      region,
      label: answer.Label ?? (args['metric_name'] as string),
      statistic,
      period_seconds: period,
      from: start.toISOString(),
      to: end.toISOString(),
      datapoints,
    };
  },
};
