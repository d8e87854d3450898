/** The paged reads the list tools and the sync share: one region each, up to a limit. */
import type { MetricAlarm, StateValue } from '@aws-sdk/client-cloudwatch';
import type { Filter, Instance } from '@aws-sdk/client-ec2';
import type { Service } from '@aws-sdk/client-ecs';
import type { FunctionConfiguration } from '@aws-sdk/client-lambda';
import { awsCall, readPages, type AwsSession } from './client.js';
import { cloudWatchSdk, ec2Sdk, ecsSdk, lambdaSdk } from './sdk.js';

export interface Read<T> {
  readonly items: T[];
  readonly truncated: boolean;
}

export async function readInstances(
  session: AwsSession,
  region: string,
  signal: AbortSignal,
  limit: number,
  filters: Filter[] = [],
  ids?: string[],
): Promise<Read<Instance>> {
  const ec2 = session.client(ec2Sdk().EC2Client, region);
  return readPages(limit, async (token) => {
    const answer = await awsCall('EC2', signal, (options) =>
      ec2.send(
        new (ec2Sdk().DescribeInstancesCommand)({
          Filters: filters.length > 0 ? filters : undefined,
          InstanceIds: ids,
          NextToken: token,
          // the API refuses MaxResults together with instance ids
          MaxResults: ids === undefined ? Math.max(5, Math.min(limit, 1000)) : undefined,
        }),
        options,
      ),
    );
    return { items: (answer.Reservations ?? []).flatMap((r) => r.Instances ?? []), next: answer.NextToken };
  });
}

const DESCRIBE_BATCH = 10; // DescribeServices takes at most 10 services

/** The services of one cluster, or of every cluster in the region, described (deployments, counts, events). */
export async function readEcsServices(session: AwsSession, region: string, signal: AbortSignal, limit: number, cluster?: string): Promise<Read<Service>> {
  const ecs = session.client(ecsSdk().ECSClient, region);
  const clusters =
    cluster === undefined
      ? (
          await readPages(100, async (token) => {
            const answer = await awsCall('ECS', signal, (options) =>
              ecs.send(new (ecsSdk().ListClustersCommand)({ nextToken: token, maxResults: 100 }), options),
            );
            return { items: answer.clusterArns ?? [], next: answer.nextToken };
          })
        ).items
      : [cluster];
  const services: Service[] = [];
  let truncated = false;
  for (const clusterName of clusters) {
    const arns = await readPages(limit - services.length, async (token) => {
      const answer = await awsCall('ECS', signal, (options) =>
        ecs.send(new (ecsSdk().ListServicesCommand)({ cluster: clusterName, nextToken: token, maxResults: 100 }), options),
      );
      return { items: answer.serviceArns ?? [], next: answer.nextToken };
    });
    truncated ||= arns.truncated;
    for (let at = 0; at < arns.items.length; at += DESCRIBE_BATCH) {
      const batch = arns.items.slice(at, at + DESCRIBE_BATCH);
      const answer = await awsCall('ECS', signal, (options) =>
        ecs.send(new (ecsSdk().DescribeServicesCommand)({ cluster: clusterName, services: batch, include: ['TAGS'] }), options),
      );
      services.push(...(answer.services ?? []));
    }
    if (services.length >= limit) {
      truncated ||= clusterName !== clusters.at(-1);
      break;
    }
  }
  return { items: services, truncated };
}

export async function readLambdaFunctions(session: AwsSession, region: string, signal: AbortSignal, limit: number): Promise<Read<FunctionConfiguration>> {
  const lambda = session.client(lambdaSdk().LambdaClient, region);
  return readPages(limit, async (token) => {
    const answer = await awsCall('Lambda', signal, (options) =>
      lambda.send(new (lambdaSdk().ListFunctionsCommand)({ Marker: token, MaxItems: Math.min(limit, 50) }), options),
    );
    return { items: answer.Functions ?? [], next: answer.NextMarker };
  });
}

export async function readAlarms(
  session: AwsSession,
  region: string,
  signal: AbortSignal,
  limit: number,
  state?: StateValue,
  prefix?: string,
): Promise<Read<MetricAlarm>> {
  const cloudwatch = session.client(cloudWatchSdk().CloudWatchClient, region);
  return readPages(limit, async (token) => {
    const answer = await awsCall('CloudWatch', signal, (options) =>
      cloudwatch.send(
        new (cloudWatchSdk().DescribeAlarmsCommand)({
          StateValue: state,
          AlarmNamePrefix: prefix,
          AlarmTypes: ['MetricAlarm'],
          NextToken: token,
          MaxRecords: Math.min(limit, 100),
        }),
        options,
      ),
    );
    return { items: answer.MetricAlarms ?? [], next: answer.NextToken };
  });
}
