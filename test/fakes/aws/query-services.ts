/** STS and Auto Scaling (query protocol) and EC2 (EC2 query protocol): form-encoded `Action=...` in, XML out. */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FakeAwsState, FakeKey } from './state.js';
import { ec2Answer, members, queryAnswer, sendError, type Protocol } from './wire.js';

export interface QueryCall {
  readonly form: URLSearchParams;
  readonly region: string;
  readonly key: FakeKey & { readonly id: string };
  readonly state: FakeAwsState;
  readonly res: ServerResponse;
  /** what the write calls did, for the tests to check */
  readonly effects: string[];
}

/** one page of `items` from an opaque offset token */
export function pageOf<T>(items: readonly T[], token: string | null | undefined, max: number): { items: T[]; next: string | undefined } {
  const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
  const end = start + max;
  return { items: items.slice(start, end), next: end < items.length ? Buffer.from(String(end)).toString('base64url') : undefined };
}

const unknownAction = (call: QueryCall, protocol: Protocol, service: string): void =>
  sendError(call.res, protocol, service, {
    status: 400,
    code: 'InvalidAction',
    message: `The action ${call.form.get('Action')} is not valid for this web service.`,
  });

const upper = (n: number): string => randomBytes(n).toString('hex').toUpperCase().slice(0, n);

export function sts(call: QueryCall): void {
  const { form, state, key, res } = call;
  switch (form.get('Action')) {
    case 'GetCallerIdentity':
      return queryAnswer(res, 'sts', 'GetCallerIdentity', { Arn: key.arn, UserId: key.userId, Account: state.account });
    case 'AssumeRole': {
      const roleArn = form.get('RoleArn') ?? '';
      const role = state.roles.get(roleArn);
      if (role === undefined || !role.trusted.includes(key.id) || (role.externalId !== undefined && form.get('ExternalId') !== role.externalId)) {
        return sendError(res, 'query', 'sts', {
          status: 403,
          code: 'AccessDenied',
          message: `User: ${key.arn} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
        });
      }
      const session = form.get('RoleSessionName') ?? 'session';
      const roleName = roleArn.split('/').pop() ?? '';
      const id = `ASIA${upper(16)}`;
      const temporary: FakeKey = {
        secret: randomBytes(30).toString('base64'),
        sessionToken: randomBytes(48).toString('base64'),
        arn: `arn:aws:sts::${state.account}:assumed-role/${roleName}/${session}`,
        userId: `AROAFAKEROLE00000001:${session}`,
      };
      state.keys.set(id, temporary);
      const expiration = new Date(Date.now() + Number(form.get('DurationSeconds') ?? '3600') * 1000);
      return queryAnswer(res, 'sts', 'AssumeRole', {
        Credentials: { AccessKeyId: id, SecretAccessKey: temporary.secret, SessionToken: temporary.sessionToken, Expiration: expiration },
        AssumedRoleUser: { AssumedRoleId: temporary.userId, Arn: temporary.arn },
      });
    }
    default:
      return unknownAction(call, 'query', 'sts');
  }
}

/** EC2 `Filter.N.Name` / `Filter.N.Value.M` */
function ec2Filters(form: URLSearchParams): { name: string; values: string[] }[] {
  const filters: { name: string; values: string[] }[] = [];
  for (let n = 1; form.has(`Filter.${n}.Name`); n++) filters.push({ name: form.get(`Filter.${n}.Name`)!, values: members(form, `Filter.${n}.Value`) });
  return filters;
}

export function ec2(call: QueryCall): void {
  const { form, state, region, res } = call;
  const ids = members(form, 'InstanceId');
  const inRegion = state.instances.filter((i) => i.region === region);
  const missing = ids.find((id) => !inRegion.some((i) => i.id === id));
  if (missing !== undefined)
    return sendError(res, 'ec2', 'ec2', { status: 400, code: 'InvalidInstanceID.NotFound', message: `The instance ID '${missing}' does not exist` });
  switch (form.get('Action')) {
    case 'DescribeInstances': {
      if (ids.length > 0 && form.has('MaxResults')) {
        return sendError(res, 'ec2', 'ec2', {
          status: 400,
          code: 'InvalidParameterCombination',
          message: 'The parameter instancesSet cannot be used with the parameter maxResults',
        });
      }
      const selected = inRegion.filter(
        (i) =>
          (ids.length === 0 || ids.includes(i.id)) &&
          ec2Filters(form).every((f) =>
            f.name === 'instance-state-name'
              ? f.values.includes(i.state)
              : f.name.startsWith('tag:')
                ? f.values.includes(i.tags[f.name.slice(4)] ?? '\u0000')
                : true,
          ),
      );
      const page = pageOf(selected, form.get('NextToken'), Number(form.get('MaxResults') ?? '1000'));
      return ec2Answer(res, 'DescribeInstances', {
        reservationSet: page.items.map((i) => ({
          reservationId: `r-${i.id.slice(2)}`,
          ownerId: state.account,
          instancesSet: [
            {
              instanceId: i.id,
              imageId: 'ami-0fake000000000001',
              instanceState: { code: { pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80 }[i.state], name: i.state },
              instanceType: i.type,
              launchTime: i.launchTime,
              placement: { availabilityZone: i.zone, tenancy: 'default' },
              privateIpAddress: i.privateIp,
              tagSet: Object.entries(i.tags).map(([k, v]) => ({ key: k, value: v })),
            },
          ],
        })),
        nextToken: page.next,
      });
    }
    case 'RebootInstances':
      call.effects.push(...ids.map((id) => `ec2:RebootInstances ${region} ${id}`));
      return ec2Answer(res, 'RebootInstances', { return: true });
    default:
      return unknownAction(call, 'ec2', 'ec2');
  }
}

export function autoscaling(call: QueryCall): void {
  const { form, state, region, res } = call;
  if (form.get('Action') !== 'DescribeAutoScalingGroups') return unknownAction(call, 'query', 'autoscaling');
  const names = members(form, 'AutoScalingGroupNames.member');
  const selected = state.groups.filter((g) => g.region === region && (names.length === 0 || names.includes(g.name)));
  const page = pageOf(selected, form.get('NextToken'), Number(form.get('MaxRecords') ?? '50'));
  return queryAnswer(res, 'autoscaling', 'DescribeAutoScalingGroups', {
    AutoScalingGroups: page.items.map((g) => ({
      AutoScalingGroupName: g.name,
      AutoScalingGroupARN: `arn:aws:autoscaling:${region}:${state.account}:autoScalingGroup:0000:autoScalingGroupName/${g.name}`,
      MinSize: g.min,
      MaxSize: g.max,
      DesiredCapacity: g.desired,
      DefaultCooldown: 300,
      AvailabilityZones: [...new Set(g.instances.map((i) => i.zone))],
      HealthCheckType: 'ELB',
      CreatedTime: new Date('2025-06-01T00:00:00Z'),
      Instances: g.instances.map((i) => ({
        InstanceId: i.id,
        AvailabilityZone: i.zone,
        LifecycleState: i.lifecycle,
        HealthStatus: i.health,
        ProtectedFromScaleIn: false,
      })),
      Tags: Object.entries(g.tags).map(([Key, Value]) => ({ ResourceId: g.name, ResourceType: 'auto-scaling-group', Key, Value, PropagateAtLaunch: true })),
    })),
    NextToken: page.next,
  });
}
