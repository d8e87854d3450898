/**
 * The built-in `aws` connector (cloud account) over the official AWS SDK v3
 * clients: EC2 instances, Auto Scaling groups, ECS services and deployments,
 * Lambda functions, CloudWatch alarms and metrics, CloudTrail events; writes
 * reboot an instance, scale an ECS service, set an alarm's state. Credentials
 * are always the source's own (keys, or a role assumed with them), never the
 * server's. Sync writes instances, services, functions and alarms into the
 * graph (model in sync.ts).
 */
import type { ConnectorPlugin } from '../contract.js';
import { AWS_CONFIG_SCHEMA } from './config.js';
import { syncAws } from './sync.js';
import { alarmsInAlarmTool } from './tools/alarms-in-alarm.js';
import { cloudtrailEventsTool } from './tools/cloudtrail-events.js';
import { listAutoScalingGroupsTool } from './tools/list-auto-scaling-groups.js';
import { listEcsServicesTool } from './tools/list-ecs-services.js';
import { listInstancesTool } from './tools/list-instances.js';
import { listLambdaFunctionsTool } from './tools/list-lambda-functions.js';
import { metricDatapointsTool } from './tools/metric-datapoints.js';
import { rebootInstanceTool } from './tools/reboot-instance.js';
import { scaleEcsServiceTool } from './tools/scale-ecs-service.js';
import { setAlarmStateTool } from './tools/set-alarm-state.js';
import { validateAws } from './validate.js';

export function createAwsPlugin(): ConnectorPlugin {
  return {
    kind: 'aws',
    version: '1.0.0',
    contract: '^1',
    description:
      'AWS account (cloud): EC2 instances, Auto Scaling groups, ECS services and deployments, Lambda functions, CloudWatch alarms in ALARM and metric datapoints, ' +
      'CloudTrail events of a resource; reboot an instance, scale an ECS service, set an alarm state.',
    configSchema: AWS_CONFIG_SCHEMA,
    validate: validateAws,
    tools: [
      listInstancesTool,
      listAutoScalingGroupsTool,
      listEcsServicesTool,
      listLambdaFunctionsTool,
      alarmsInAlarmTool,
      metricDatapointsTool,
      cloudtrailEventsTool,
      rebootInstanceTool,
      scaleEcsServiceTool,
      setAlarmStateTool,
    ],
    sync: syncAws,
  };
}
