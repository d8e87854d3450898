/** What the fake AWS account holds, and a sample account the tests start from. */

export interface FakeKey {
  readonly secret: string;
  /** temporary credentials (from AssumeRole) must carry this token */
  readonly sessionToken?: string;
  /** who the key is, as GetCallerIdentity answers */
  readonly arn: string;
  readonly userId: string;
}

export interface FakeRole {
  /** access key ids allowed to assume it */
  readonly trusted: readonly string[];
  readonly externalId?: string;
}

export interface FakeInstance {
  id: string;
  region: string;
  state: 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';
  type: string;
  zone: string;
  privateIp: string;
  launchTime: Date;
  tags: Record<string, string>;
}

export interface FakeGroup {
  name: string;
  region: string;
  min: number;
  max: number;
  desired: number;
  instances: { id: string; lifecycle: string; health: string; zone: string }[];
  tags: Record<string, string>;
}

export interface FakeEcsService {
  cluster: string;
  name: string;
  region: string;
  desired: number;
  running: number;
  pending: number;
  taskDefinition: string;
  deployments: {
    id: string;
    status: string;
    rolloutState: string;
    taskDefinition: string;
    desired: number;
    running: number;
    pending: number;
    failed: number;
    createdAt: Date;
  }[];
  events: { id: string; createdAt: Date; message: string }[];
  tags: Record<string, string>;
}

export interface FakeFunction {
  name: string;
  region: string;
  runtime: string;
  handler: string;
  memory: number;
  timeout: number;
  lastModified: string;
  tags: Record<string, string>;
}

export interface FakeAlarm {
  name: string;
  region: string;
  state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';
  reason: string;
  updated: Date;
  namespace: string;
  metric: string;
  dimensions: Record<string, string>;
  statistic: string;
  comparison: string;
  threshold: number;
}

export interface FakeDatapoint {
  region: string;
  namespace: string;
  metric: string;
  dimensions: Record<string, string>;
  at: Date;
  value: number;
  unit: string;
}

export interface FakeTrailEvent {
  id: string;
  region: string;
  name: string;
  time: Date;
  source: string;
  username: string;
  readOnly: boolean;
  resources: { type: string; name: string }[];
}

export interface FakeAwsState {
  account: string;
  keys: Map<string, FakeKey>;
  roles: Map<string, FakeRole>;
  instances: FakeInstance[];
  groups: FakeGroup[];
  clusters: { name: string; region: string }[];
  ecsServices: FakeEcsService[];
  functions: FakeFunction[];
  alarms: FakeAlarm[];
  datapoints: FakeDatapoint[];
  trail: FakeTrailEvent[];
}

export const ACCOUNT = '123456789012';
export const GOOD_KEY = { id: 'AKIAFAKEGOODKEY00001', secret: 'fake/secret+key/for+the+tests0000000000' };
export const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/agent-read`;
export const ROLE_EXTERNAL_ID = 'acme-ext-42';

const minutesAgo = (minutes: number): Date => new Date(Date.now() - minutes * 60_000);

export function sampleAccount(): FakeAwsState {
  const region = 'us-east-1';
  return {
    account: ACCOUNT,
    keys: new Map([[GOOD_KEY.id, { secret: GOOD_KEY.secret, arn: `arn:aws:iam::${ACCOUNT}:user/sre-agent`, userId: 'AIDAFAKEUSER00000001' }]]),
    roles: new Map([[ROLE_ARN, { trusted: [GOOD_KEY.id], externalId: ROLE_EXTERNAL_ID }]]),
    instances: [
      {
        id: 'i-0a1b2c3d4e5f60001',
        region,
        state: 'running',
        type: 'm6i.large',
        zone: 'us-east-1a',
        privateIp: '10.0.1.10',
        launchTime: minutesAgo(9000),
        tags: { Name: 'checkout-1', service: 'checkout' },
      },
      {
        id: 'i-0a1b2c3d4e5f60002',
        region,
        state: 'running',
        type: 'm6i.large',
        zone: 'us-east-1b',
        privateIp: '10.0.2.11',
        launchTime: minutesAgo(8000),
        tags: { Name: 'checkout-2', service: 'checkout' },
      },
      {
        id: 'i-0a1b2c3d4e5f60003',
        region,
        state: 'stopped',
        type: 't3.small',
        zone: 'us-east-1a',
        privateIp: '10.0.1.12',
        launchTime: minutesAgo(50000),
        tags: { Name: 'bastion' },
      },
      {
        id: 'i-0a1b2c3d4e5f60004',
        region,
        state: 'terminated',
        type: 't3.small',
        zone: 'us-east-1a',
        privateIp: '10.0.1.13',
        launchTime: minutesAgo(90000),
        tags: { Name: 'old-worker', App: 'billing' },
      },
      {
        id: 'i-0eeeeeeeeeeee0005',
        region: 'eu-west-1',
        state: 'running',
        type: 'c7g.xlarge',
        zone: 'eu-west-1a',
        privateIp: '10.8.0.5',
        launchTime: minutesAgo(3000),
        tags: { Name: 'search-eu-1', app: 'search' },
      },
    ],
    groups: [
      {
        name: 'checkout-asg',
        region,
        min: 2,
        max: 6,
        desired: 3,
        instances: [
          { id: 'i-0a1b2c3d4e5f60001', lifecycle: 'InService', health: 'Healthy', zone: 'us-east-1a' },
          { id: 'i-0a1b2c3d4e5f60002', lifecycle: 'InService', health: 'Unhealthy', zone: 'us-east-1b' },
          { id: 'i-0a1b2c3d4e5f60009', lifecycle: 'Pending', health: 'Healthy', zone: 'us-east-1a' },
        ],
        tags: { service: 'checkout' },
      },
    ],
    clusters: [{ name: 'prod', region }],
    ecsServices: [
      {
        cluster: 'prod',
        name: 'orders-api',
        region,
        desired: 4,
        running: 2,
        pending: 1,
        taskDefinition: 'orders-api:42',
        deployments: [
          {
            id: 'ecs-svc/1111',
            status: 'PRIMARY',
            rolloutState: 'IN_PROGRESS',
            taskDefinition: 'orders-api:42',
            desired: 4,
            running: 1,
            pending: 1,
            failed: 6,
            createdAt: minutesAgo(30),
          },
          {
            id: 'ecs-svc/1110',
            status: 'ACTIVE',
            rolloutState: 'COMPLETED',
            taskDefinition: 'orders-api:41',
            desired: 0,
            running: 1,
            pending: 0,
            failed: 0,
            createdAt: minutesAgo(5000),
          },
        ],
        events: [{ id: 'ev-1', createdAt: minutesAgo(2), message: '(service orders-api) has started 1 tasks: (task 9f2). Essential container in task exited' }],
        tags: { service: 'orders' },
      },
      {
        cluster: 'prod',
        name: 'mailer',
        region,
        desired: 1,
        running: 1,
        pending: 0,
        taskDefinition: 'mailer:7',
        deployments: [
          {
            id: 'ecs-svc/2220',
            status: 'PRIMARY',
            rolloutState: 'COMPLETED',
            taskDefinition: 'mailer:7',
            desired: 1,
            running: 1,
            pending: 0,
            failed: 0,
            createdAt: minutesAgo(20000),
          },
        ],
        events: [],
        tags: {},
      },
    ],
    functions: [
      {
        name: 'orders-webhook',
        region,
        runtime: 'nodejs20.x',
        handler: 'index.handler',
        memory: 512,
        timeout: 30,
        lastModified: '2026-01-10T08:00:00.000+0000',
        tags: { service: 'orders' },
      },
      {
        name: 'nightly-report',
        region,
        runtime: 'python3.12',
        handler: 'app.main',
        memory: 1024,
        timeout: 900,
        lastModified: '2025-12-01T02:00:00.000+0000',
        tags: {},
      },
    ],
    alarms: [
      {
        name: 'checkout-1-cpu-high',
        region,
        state: 'ALARM',
        reason: 'Threshold Crossed: 3 datapoints [97.1, 96.4, 95.0] were greater than the threshold (90.0).',
        updated: minutesAgo(12),
        namespace: 'AWS/EC2',
        metric: 'CPUUtilization',
        dimensions: { InstanceId: 'i-0a1b2c3d4e5f60001' },
        statistic: 'Average',
        comparison: 'GreaterThanThreshold',
        threshold: 90,
      },
      {
        name: 'orders-api-running-low',
        region,
        state: 'ALARM',
        reason: 'Threshold Crossed: 1 datapoint [2.0] was less than the threshold (3.0).',
        updated: minutesAgo(25),
        namespace: 'ECS/ContainerInsights',
        metric: 'RunningTaskCount',
        dimensions: { ClusterName: 'prod', ServiceName: 'orders-api' },
        statistic: 'Minimum',
        comparison: 'LessThanThreshold',
        threshold: 3,
      },
      {
        name: 'orders-webhook-errors',
        region,
        state: 'OK',
        reason: 'Threshold Crossed: no datapoints were greater than the threshold (5.0).',
        updated: minutesAgo(600),
        namespace: 'AWS/Lambda',
        metric: 'Errors',
        dimensions: { FunctionName: 'orders-webhook' },
        statistic: 'Sum',
        comparison: 'GreaterThanThreshold',
        threshold: 5,
      },
    ],
    datapoints: [30, 20, 10, 5, 90].map((ago, index) => ({
      region,
      namespace: 'AWS/EC2',
      metric: 'CPUUtilization',
      dimensions: { InstanceId: 'i-0a1b2c3d4e5f60001' },
      at: minutesAgo(ago),
      value: [40, 71.5, 96.4, 97.1, 12][index]!,
      unit: 'Percent',
    })),
    trail: [
      {
        id: 'ev-aaaa',
        region,
        name: 'ModifyInstanceAttribute',
        time: minutesAgo(40),
        source: 'ec2.amazonaws.com',
        username: 'deploy-bot',
        readOnly: false,
        resources: [{ type: 'AWS::EC2::Instance', name: 'i-0a1b2c3d4e5f60001' }],
      },
      {
        id: 'ev-bbbb',
        region,
        name: 'RebootInstances',
        time: minutesAgo(3000),
        source: 'ec2.amazonaws.com',
        username: 'alice',
        readOnly: false,
        resources: [{ type: 'AWS::EC2::Instance', name: 'i-0a1b2c3d4e5f60001' }],
      },
      {
        id: 'ev-cccc',
        region,
        name: 'UpdateService',
        time: minutesAgo(31),
        source: 'ecs.amazonaws.com',
        username: 'deploy-bot',
        readOnly: false,
        resources: [{ type: 'AWS::ECS::Service', name: 'orders-api' }],
      },
    ],
  };
}
