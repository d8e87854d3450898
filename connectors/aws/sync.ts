/**
 * ETL for an aws source, region by region, into the source's realm:
 *
 *   (:Instance {instance_id, state, type})        key arn:<partition>:ec2:<region>:<account>:instance/<id>
 *   (:EcsService {cluster, desired/running count}) key the service ARN
 *   (:LambdaFunction {runtime, memory_mb})         key the function ARN
 *   (:Alarm {state, metric, namespace})            key the alarm ARN
 *   (:Service {name})                              key the value of a `service` or `app` tag (what the
 *                                                  other connectors call the service, e.g. `checkout`)
 *
 *   (Instance|EcsService|LambdaFunction)-[:RUNS]->(Service)   from the resource's `service`/`app` tag
 *   (Alarm)-[:MONITORS]->(Instance|EcsService|LambdaFunction) from the alarm's metric dimensions
 *                                                             (InstanceId; ClusterName + ServiceName; FunctionName)
 *
 * Terminated instances are left out. Every node carries `source: 'aws'`, the region and the account.
 */
import type { Instance } from '@aws-sdk/client-ec2';
import type { GraphNodeInput, GraphRelationshipInput, SyncContext, SyncReport } from '../contract.js';
import { awsCall, awsSession, type AwsSession } from './client.js';
import { dimensionsOf, tagsOf } from './present.js';
import { readAlarms, readEcsServices, readInstances, readLambdaFunctions } from './read.js';
import { callerIdentity } from './validate.js';
import { lambdaSdk } from './sdk.js';

/** tag keys (any case) whose value names the service a resource runs, first match wins */
const SERVICE_TAG_KEYS = ['service', 'app'] as const;
const MAX_PER_KIND = 5000;

interface RegionGraph {
  readonly nodes: GraphNodeInput[];
  readonly relationships: GraphRelationshipInput[];
  readonly counts: Record<'instances' | 'ecs_services' | 'lambda_functions' | 'alarms' | 'services', number>;
}

function serviceOf(tags: Record<string, string>): string | null {
  for (const wanted of SERVICE_TAG_KEYS) {
    const key = Object.keys(tags).find((k) => k.toLowerCase() === wanted);
    const value = key === undefined ? undefined : tags[key]?.trim();
    if (value) return value;
  }
  return null;
}

async function lambdaTags(session: AwsSession, region: string, arn: string, signal: AbortSignal): Promise<Record<string, string>> {
  const lambda = session.client(lambdaSdk().LambdaClient, region);
  const answer = await awsCall('Lambda', signal, (options) => lambda.send(new (lambdaSdk().ListTagsCommand)({ Resource: arn }), options));
  return answer.Tags ?? {};
}

/** `services`: the Service nodes already written by this sync (shared across regions) */
async function regionGraph(
  session: AwsSession,
  region: string,
  account: { id: string; partition: string },
  services: Set<string>,
  signal: AbortSignal,
): Promise<RegionGraph> {
  const nodes: GraphNodeInput[] = [];
  const relationships: GraphRelationshipInput[] = [];
  const servicesBefore = services.size;
  const common = { source: 'aws', region, account: account.id };
  const runs = (label: string, key: string, tags: Record<string, string>): void => {
    const service = serviceOf(tags);
    if (service === null) return;
    if (!services.has(service)) nodes.push({ label: 'Service', properties: { _key: service, name: service } });
    services.add(service);
    relationships.push({ type: 'RUNS', from_label: label, from_key: key, to_label: 'Service', to_key: service });
  };

  const instanceKeys = new Map<string, string>();
  const instances = (await readInstances(session, region, signal, MAX_PER_KIND)).items.filter((i: Instance) => i.State?.Name !== 'terminated');
  for (const instance of instances) {
    const id = instance.InstanceId ?? '';
    const key = `arn:${account.partition}:ec2:${region}:${account.id}:instance/${id}`;
    const tags = tagsOf(instance.Tags);
    instanceKeys.set(id, key);
    nodes.push({
      label: 'Instance',
      properties: { _key: key, instance_id: id, name: tags['Name'] ?? id, state: instance.State?.Name ?? null, type: instance.InstanceType ?? null, ...common },
    });
    runs('Instance', key, tags);
  }

  const ecsKeys = new Map<string, string>();
  const ecsServices = (await readEcsServices(session, region, signal, MAX_PER_KIND)).items;
  for (const service of ecsServices) {
    const key = service.serviceArn ?? '';
    const cluster = service.clusterArn?.split('/').pop() ?? '';
    ecsKeys.set(`${cluster}/${service.serviceName ?? ''}`, key);
    nodes.push({
      label: 'EcsService',
      properties: {
        _key: key,
        name: service.serviceName ?? '',
        cluster,
        desired_count: service.desiredCount ?? 0,
        running_count: service.runningCount ?? 0,
        status: service.status ?? null,
        ...common,
      },
    });
    runs('EcsService', key, tagsOf(service.tags));
  }

  const functionKeys = new Map<string, string>();
  const functions = (await readLambdaFunctions(session, region, signal, MAX_PER_KIND)).items;
  for (const fn of functions) {
    const key = fn.FunctionArn ?? '';
    functionKeys.set(fn.FunctionName ?? '', key);
    nodes.push({
      label: 'LambdaFunction',
      properties: { _key: key, name: fn.FunctionName ?? '', runtime: fn.Runtime ?? null, memory_mb: fn.MemorySize ?? null, ...common },
    });
    runs('LambdaFunction', key, await lambdaTags(session, region, key, signal));
  }

  const alarms = (await readAlarms(session, region, signal, MAX_PER_KIND)).items;
  for (const alarm of alarms) {
    const key = alarm.AlarmArn ?? '';
    const dimensions = dimensionsOf(alarm);
    nodes.push({
      label: 'Alarm',
      properties: {
        _key: key,
        name: alarm.AlarmName ?? '',
        state: alarm.StateValue ?? null,
        namespace: alarm.Namespace ?? null,
        metric: alarm.MetricName ?? null,
        ...common,
      },
    });
    const targets: [string, string | undefined][] = [
      ['Instance', instanceKeys.get(dimensions['InstanceId'] ?? '')],
      ['EcsService', ecsKeys.get(`${dimensions['ClusterName'] ?? ''}/${dimensions['ServiceName'] ?? ''}`)],
      ['LambdaFunction', functionKeys.get(dimensions['FunctionName'] ?? '')],
    ];
    for (const [label, target] of targets) {
      if (target !== undefined) relationships.push({ type: 'MONITORS', from_label: 'Alarm', from_key: key, to_label: label, to_key: target });
    }
  }
  return {
    nodes,
    relationships,
    counts: {
      instances: instances.length,
      ecs_services: ecsServices.length,
      lambda_functions: functions.length,
      alarms: alarms.length,
      services: services.size - servicesBefore,
    },
  };
}

export async function syncAws(ctx: SyncContext): Promise<SyncReport> {
  const session = await awsSession(ctx.config, ctx.net, ctx.signal);
  const identity = await callerIdentity(ctx.config, ctx.net, ctx.signal);
  const account = { id: identity.account, partition: identity.arn.split(':')[1] || 'aws' };
  const counts = { regions: 0, instances: 0, ecs_services: 0, lambda_functions: 0, alarms: 0, services: 0 };
  let nodes = 0;
  let relationships = 0;
  const services = new Set<string>();
  for (const [index, region] of session.config.regions.entries()) {
    ctx.progress(index / session.config.regions.length, `region ${region}`);
    const graph = await regionGraph(session, region, account, services, ctx.signal);
    if (ctx.graph) {
      await ctx.graph.upsertNodes(graph.nodes);
      await ctx.graph.upsertRelationships(graph.relationships);
    }
    nodes += graph.nodes.length;
    relationships += graph.relationships.length;
    counts.regions += 1;
    for (const kind of ['instances', 'ecs_services', 'lambda_functions', 'alarms', 'services'] as const) counts[kind] += graph.counts[kind];
  }
  ctx.progress(1, 'done');
  return { nodes, relationships, details: { account: account.id, ...counts } };
}
