/** ECS and CloudTrail (JSON 1.1), CloudWatch (JSON 1.0, query-compatible errors), Lambda (REST-JSON). */
import type { ServerResponse } from 'node:http';
import { pageOf } from './query-services.js';
import type { FakeAwsState, FakeEcsService } from './state.js';
import { epoch, sendError, sendJson } from './wire.js';

type Json = Record<string, any>;

export interface JsonCall {
  /** the operation: the part of `x-amz-target` after the last dot */
  readonly operation: string;
  readonly input: Json;
  readonly region: string;
  readonly state: FakeAwsState;
  readonly res: ServerResponse;
  readonly effects: string[];
}

const CW = { namespace: 'com.amazonaws.cloudwatch', queryCompatible: true } as const;

const lastOf = (nameOrArn: string): string => nameOrArn.split('/').pop() ?? nameOrArn;

function ecsServiceJson(s: FakeEcsService, state: FakeAwsState): Json {
  const arnBase = `arn:aws:ecs:${s.region}:${state.account}`;
  return {
    serviceArn: `${arnBase}:service/${s.cluster}/${s.name}`,
    serviceName: s.name,
    clusterArn: `${arnBase}:cluster/${s.cluster}`,
    status: 'ACTIVE',
    desiredCount: s.desired,
    runningCount: s.running,
    pendingCount: s.pending,
    launchType: 'FARGATE',
    taskDefinition: `${arnBase}:task-definition/${s.taskDefinition}`,
    deployments: s.deployments.map((d) => ({
      id: d.id,
      status: d.status,
      taskDefinition: `${arnBase}:task-definition/${d.taskDefinition}`,
      desiredCount: d.desired,
      runningCount: d.running,
      pendingCount: d.pending,
      failedTasks: d.failed,
      createdAt: epoch(d.createdAt),
      updatedAt: epoch(d.createdAt),
      rolloutState: d.rolloutState,
      rolloutStateReason: d.rolloutState === 'COMPLETED' ? 'ECS deployment completed.' : 'ECS deployment in progress.',
    })),
    events: s.events.map((e) => ({ id: e.id, createdAt: epoch(e.createdAt), message: e.message })),
    tags: Object.entries(s.tags).map(([key, value]) => ({ key, value })),
  };
}

export function ecs(call: JsonCall): void {
  const { input, state, region, res } = call;
  const clusterName = typeof input['cluster'] === 'string' ? lastOf(input['cluster']) : 'default';
  const inCluster = state.ecsServices.filter((s) => s.region === region && s.cluster === clusterName);
  const clusterKnown = state.clusters.some((c) => c.region === region && c.name === clusterName);
  if (call.operation !== 'ListClusters' && !clusterKnown)
    return sendError(res, 'json1.1', 'ecs', { status: 400, code: 'ClusterNotFoundException', message: 'Cluster not found.' });
  switch (call.operation) {
    case 'ListClusters': {
      const page = pageOf(
        state.clusters.filter((c) => c.region === region),
        input['nextToken'],
        input['maxResults'] ?? 100,
      );
      return sendJson(res, 'json1.1', 200, {
        clusterArns: page.items.map((c) => `arn:aws:ecs:${region}:${state.account}:cluster/${c.name}`),
        nextToken: page.next,
      });
    }
    case 'ListServices': {
      const page = pageOf(inCluster, input['nextToken'], input['maxResults'] ?? 10);
      return sendJson(res, 'json1.1', 200, { serviceArns: page.items.map((s) => ecsServiceJson(s, state)['serviceArn']), nextToken: page.next });
    }
    case 'DescribeServices': {
      const wanted = (input['services'] as string[]).map(lastOf);
      if (wanted.length > 10)
        return sendError(res, 'json1.1', 'ecs', { status: 400, code: 'InvalidParameterException', message: 'services can have at most 10 items.' });
      const found = inCluster.filter((s) => wanted.includes(s.name));
      const failures = wanted.filter((name) => !found.some((s) => s.name === name)).map((name) => ({ arn: name, reason: 'MISSING' }));
      return sendJson(res, 'json1.1', 200, { services: found.map((s) => ecsServiceJson(s, state)), failures });
    }
    case 'UpdateService': {
      const service = inCluster.find((s) => s.name === lastOf(String(input['service'])));
      if (service === undefined) return sendError(res, 'json1.1', 'ecs', { status: 400, code: 'ServiceNotFoundException', message: 'Service not found.' });
      if (typeof input['desiredCount'] === 'number') {
        service.desired = input['desiredCount'];
        service.deployments[0]!.desired = input['desiredCount'];
        call.effects.push(`ecs:UpdateService ${region} ${service.cluster}/${service.name} desiredCount=${input['desiredCount']}`);
      }
      return sendJson(res, 'json1.1', 200, { service: ecsServiceJson(service, state) });
    }
    default:
      return sendError(res, 'json1.1', 'ecs', { status: 400, code: 'UnknownOperationException', message: `unknown operation ${call.operation}` });
  }
}

export function cloudwatch(call: JsonCall): void {
  const { input, state, region, res } = call;
  const alarms = state.alarms.filter((a) => a.region === region);
  switch (call.operation) {
    case 'DescribeAlarms': {
      const selected = alarms.filter(
        (a) => (input['StateValue'] === undefined || a.state === input['StateValue']) && a.name.startsWith(input['AlarmNamePrefix'] ?? ''),
      );
      const page = pageOf(selected, input['NextToken'], input['MaxRecords'] ?? 50);
      return sendJson(res, 'json1.0', 200, {
        MetricAlarms: page.items.map((a) => ({
          AlarmName: a.name,
          AlarmArn: `arn:aws:cloudwatch:${region}:${state.account}:alarm:${a.name}`,
          ActionsEnabled: true,
          StateValue: a.state,
          StateReason: a.reason,
          StateUpdatedTimestamp: epoch(a.updated),
          MetricName: a.metric,
          Namespace: a.namespace,
          Statistic: a.statistic,
          Dimensions: Object.entries(a.dimensions).map(([Name, Value]) => ({ Name, Value })),
          Period: 60,
          EvaluationPeriods: 3,
          Threshold: a.threshold,
          ComparisonOperator: a.comparison,
        })),
        CompositeAlarms: [],
        ...(page.next === undefined ? {} : { NextToken: page.next }),
      });
    }
    case 'GetMetricStatistics': {
      const [start, end] = [input['StartTime'] as number, input['EndTime'] as number];
      if (typeof start !== 'number' || typeof end !== 'number') {
        return sendError(res, 'json1.0', 'monitoring', {
          status: 400,
          code: 'InvalidParameterValue',
          message: 'StartTime and EndTime must be timestamps',
          ...CW,
        });
      }
      const dims = Object.fromEntries(((input['Dimensions'] ?? []) as Json[]).map((d) => [d['Name'], d['Value']]));
      const statistic = (input['Statistics'] as string[])[0]!;
      const points = state.datapoints.filter(
        (p) =>
          p.region === region &&
          p.namespace === input['Namespace'] &&
          p.metric === input['MetricName'] &&
          JSON.stringify(p.dimensions) === JSON.stringify(dims) &&
          epoch(p.at) >= start &&
          epoch(p.at) <= end,
      );
      // datapoints come back unordered, as CloudWatch returns them
      return sendJson(res, 'json1.0', 200, {
        Label: input['MetricName'],
        Datapoints: points.reverse().map((p) => ({ Timestamp: epoch(p.at), [statistic]: p.value, Unit: p.unit })),
      });
    }
    case 'SetAlarmState': {
      const alarm = alarms.find((a) => a.name === input['AlarmName']);
      if (alarm === undefined)
        return sendError(res, 'json1.0', 'monitoring', { status: 404, code: 'ResourceNotFound', message: `Alarm ${input['AlarmName']} not found`, ...CW });
      alarm.state = input['StateValue'];
      alarm.reason = input['StateReason'];
      alarm.updated = new Date();
      call.effects.push(`cloudwatch:SetAlarmState ${region} ${alarm.name} ${alarm.state}`);
      return sendJson(res, 'json1.0', 200, {});
    }
    default:
      return sendError(res, 'json1.0', 'monitoring', { status: 400, code: 'InvalidAction', message: `unknown operation ${call.operation}`, ...CW });
  }
}

export function cloudtrail(call: JsonCall): void {
  const { input, state, region, res } = call;
  if (call.operation !== 'LookupEvents')
    return sendError(res, 'json1.1', 'cloudtrail', { status: 400, code: 'UnknownOperationException', message: `unknown operation ${call.operation}` });
  const attribute = ((input['LookupAttributes'] ?? []) as Json[])[0];
  if (attribute !== undefined && attribute['AttributeKey'] !== 'ResourceName') {
    return sendError(res, 'json1.1', 'cloudtrail', {
      status: 400,
      code: 'InvalidLookupAttributesException',
      message: 'the fake only looks up by ResourceName',
    });
  }
  const start = input['StartTime'] as number | undefined;
  const end = input['EndTime'] as number | undefined;
  const events = state.trail
    .filter((e) => e.region === region && (attribute === undefined || e.resources.some((r) => r.name === attribute['AttributeValue'])))
    .filter((e) => (start === undefined || epoch(e.time) >= start) && (end === undefined || epoch(e.time) <= end))
    .sort((a, b) => b.time.getTime() - a.time.getTime());
  const page = pageOf(events, input['NextToken'], input['MaxResults'] ?? 50);
  return sendJson(res, 'json1.1', 200, {
    Events: page.items.map((e) => ({
      EventId: e.id,
      EventName: e.name,
      ReadOnly: String(e.readOnly),
      EventTime: epoch(e.time),
      EventSource: e.source,
      Username: e.username,
      Resources: e.resources.map((r) => ({ ResourceType: r.type, ResourceName: r.name })),
      CloudTrailEvent: JSON.stringify({ eventVersion: '1.08', eventName: e.name, awsRegion: region }),
    })),
    ...(page.next === undefined ? {} : { NextToken: page.next }),
  });
}

/** Lambda's REST-JSON routes: `GET /2015-03-31/functions/` and `GET /2017-03-31/tags/{arn}` */
export function lambda(method: string, url: URL, region: string, state: FakeAwsState, res: ServerResponse): void {
  const fns = state.functions.filter((f) => f.region === region);
  const arnOf = (name: string): string => `arn:aws:lambda:${region}:${state.account}:function:${name}`;
  if (method === 'GET' && /^\/2015-03-31\/functions\/?$/.test(url.pathname)) {
    const page = pageOf(fns, url.searchParams.get('Marker'), Number(url.searchParams.get('MaxItems') ?? '50'));
    return sendJson(res, 'rest-json', 200, {
      Functions: page.items.map((f) => ({
        FunctionName: f.name,
        FunctionArn: arnOf(f.name),
        Runtime: f.runtime,
        Role: `arn:aws:iam::${state.account}:role/${f.name}-role`,
        Handler: f.handler,
        CodeSize: 12345,
        Description: '',
        Timeout: f.timeout,
        MemorySize: f.memory,
        LastModified: f.lastModified,
        Version: '$LATEST',
        PackageType: 'Zip',
        Architectures: ['x86_64'],
      })),
      NextMarker: page.next ?? null,
    });
  }
  const tags = /^\/2017-03-31\/tags\/(.+)$/.exec(url.pathname);
  if (method === 'GET' && tags) {
    const arn = decodeURIComponent(tags[1]!);
    const fn = fns.find((f) => arnOf(f.name) === arn);
    if (fn === undefined)
      return sendError(res, 'rest-json', 'lambda', { status: 404, code: 'ResourceNotFoundException', message: `Function not found: ${arn}` });
    return sendJson(res, 'rest-json', 200, { Tags: fn.tags });
  }
  return sendError(res, 'rest-json', 'lambda', { status: 404, code: 'UnknownOperationException', message: `no route ${method} ${url.pathname}` });
}
