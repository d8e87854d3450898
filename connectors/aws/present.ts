/** Compact, JSON-plain views of AWS resources: what the model needs, not every field. */
import type { AutoScalingGroup } from '@aws-sdk/client-auto-scaling';
import type { Event as TrailEvent } from '@aws-sdk/client-cloudtrail';
import type { MetricAlarm } from '@aws-sdk/client-cloudwatch';
import type { Instance } from '@aws-sdk/client-ec2';
import type { Service as EcsService } from '@aws-sdk/client-ecs';
import type { FunctionConfiguration } from '@aws-sdk/client-lambda';

/** `[{Key, Value}]` (EC2, Auto Scaling, ECS) as a plain object */
export function tagsOf(
  tags: readonly { Key?: string | undefined; Value?: string | undefined; key?: string | undefined; value?: string | undefined }[] | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const tag of tags ?? []) {
    const key = tag.Key ?? tag.key;
    if (key !== undefined) out[key] = tag.Value ?? tag.value ?? '';
  }
  return out;
}

export const iso = (value: Date | undefined): string | null => (value === undefined ? null : value.toISOString());

export function instanceView(instance: Instance, region: string): Record<string, unknown> {
  const tags = tagsOf(instance.Tags);
  return {
    instance_id: instance.InstanceId ?? '',
    name: tags['Name'] ?? null,
    region,
    state: instance.State?.Name ?? null,
    state_reason: instance.StateReason?.Message ?? null,
    type: instance.InstanceType ?? null,
    availability_zone: instance.Placement?.AvailabilityZone ?? null,
    private_ip: instance.PrivateIpAddress ?? null,
    public_ip: instance.PublicIpAddress ?? null,
    launched_at: iso(instance.LaunchTime),
    tags,
  };
}

export function autoScalingGroupView(group: AutoScalingGroup, region: string): Record<string, unknown> {
  const instances = (group.Instances ?? []).map((i) => ({
    instance_id: i.InstanceId ?? '',
    lifecycle_state: i.LifecycleState ?? null,
    health_status: i.HealthStatus ?? null,
    availability_zone: i.AvailabilityZone ?? null,
  }));
  return {
    name: group.AutoScalingGroupName ?? '',
    region,
    min_size: group.MinSize ?? null,
    max_size: group.MaxSize ?? null,
    desired_capacity: group.DesiredCapacity ?? null,
    in_service: instances.filter((i) => i.lifecycle_state === 'InService').length,
    unhealthy: instances.filter((i) => i.health_status !== null && i.health_status !== 'Healthy').length,
    instances,
    tags: tagsOf(group.Tags),
  };
}

export function ecsServiceView(service: EcsService, region: string): Record<string, unknown> {
  return {
    name: service.serviceName ?? '',
    arn: service.serviceArn ?? '',
    cluster: service.clusterArn?.split('/').pop() ?? null,
    region,
    status: service.status ?? null,
    desired_count: service.desiredCount ?? 0,
    running_count: service.runningCount ?? 0,
    pending_count: service.pendingCount ?? 0,
    launch_type: service.launchType ?? null,
    task_definition: service.taskDefinition?.split('/').pop() ?? null,
    deployments: (service.deployments ?? []).map((d) => ({
      id: d.id ?? '',
      status: d.status ?? null,
      rollout_state: d.rolloutState ?? null,
      rollout_state_reason: d.rolloutStateReason ?? null,
      task_definition: d.taskDefinition?.split('/').pop() ?? null,
      desired_count: d.desiredCount ?? 0,
      running_count: d.runningCount ?? 0,
      pending_count: d.pendingCount ?? 0,
      failed_tasks: d.failedTasks ?? 0,
      created_at: iso(d.createdAt),
      updated_at: iso(d.updatedAt),
    })),
    // the newest few service events say why tasks do not start
    recent_events: (service.events ?? []).slice(0, 5).map((e) => ({ at: iso(e.createdAt), message: e.message ?? '' })),
    tags: tagsOf(service.tags),
  };
}

export function lambdaFunctionView(fn: FunctionConfiguration, region: string): Record<string, unknown> {
  return {
    name: fn.FunctionName ?? '',
    arn: fn.FunctionArn ?? '',
    region,
    runtime: fn.Runtime ?? null,
    handler: fn.Handler ?? null,
    memory_mb: fn.MemorySize ?? null,
    timeout_s: fn.Timeout ?? null,
    code_size: fn.CodeSize ?? null,
    last_modified: fn.LastModified ?? null,
    description: fn.Description ?? '',
    state: fn.State ?? null,
  };
}

export const dimensionsOf = (alarm: Pick<MetricAlarm, 'Dimensions'>): Record<string, string> =>
  Object.fromEntries((alarm.Dimensions ?? []).map((d) => [d.Name ?? '', d.Value ?? '']));

export function alarmView(alarm: MetricAlarm, region: string): Record<string, unknown> {
  return {
    name: alarm.AlarmName ?? '',
    arn: alarm.AlarmArn ?? '',
    region,
    state: alarm.StateValue ?? null,
    reason: alarm.StateReason ?? null,
    since: iso(alarm.StateUpdatedTimestamp),
    namespace: alarm.Namespace ?? null,
    metric: alarm.MetricName ?? null,
    dimensions: dimensionsOf(alarm),
    statistic: alarm.Statistic ?? alarm.ExtendedStatistic ?? null,
    comparison: alarm.ComparisonOperator ?? null,
    threshold: alarm.Threshold ?? null,
    actions_enabled: alarm.ActionsEnabled ?? null,
  };
}

export function trailEventView(event: TrailEvent): Record<string, unknown> {
  return {
    event_id: event.EventId ?? '',
    name: event.EventName ?? '',
    time: iso(event.EventTime),
    source: event.EventSource ?? null,
    username: event.Username ?? null,
    read_only: event.ReadOnly === undefined ? null : event.ReadOnly === 'true',
    resources: (event.Resources ?? []).map((r) => ({ type: r.ResourceType ?? null, name: r.ResourceName ?? '' })),
  };
}
