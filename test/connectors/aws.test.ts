/**
 * The aws connector against the fake AWS, through the official SDK v3
 * clients: conformance kit, validation (and the role it assumes), every tool,
 * the wire protocol each service got, and the sync's graph model.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ListGraphSink } from '../helpers/tools.js';
import { createAwsPlugin } from '../../connectors/aws/index.js';
import { createCatalog } from '../../runtime/tools/catalog.js';
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { loadPlugins } from '../../connectors/loader.js';
import { startFakeAws } from '../fakes/aws/server.js';
import { GOOD_KEY, ROLE_ARN, ROLE_EXTERNAL_ID, sampleAccount } from '../fakes/aws/state.js';

const fake = await startFakeAws(sampleAccount());
afterAll(() => fake.close());

const plugin = createAwsPlugin();
const config = { regions: ['us-east-1', 'eu-west-1'], access_key_id: GOOD_KEY.id, secret_access_key: GOOD_KEY.secret, endpoint: fake.url };
const registry = await loadPlugins({ builtins: [plugin], pluginsFile: new URL('../../plugins.json', import.meta.url).pathname });

/** runs a tool the way a run does (schema defaults filled, errors as outcomes) */
const run = async (name: string, args: Record<string, unknown>, sourceConfig: Record<string, unknown> = config) => {
  const catalog = createCatalog(registry, { sources: [{ id: 'src_aws', kind: 'aws', name: 'prod account', config: sourceConfig }] });
  const resolved = catalog.resolve(`aws.${name}`, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.error));
  return (await catalog.run(resolved, { orgId: 'org_aws', signal: new AbortController().signal })) as { result?: any; error?: any };
};
const requestsSince = (before: number) => fake.requests.slice(before);

beforeEach(() => {
  fake.effects.length = 0;
});

describeConnectorConformance(plugin, {
  validConfig: config,
  invalidConfig: { ...config, secret_access_key: 'not-the-secret' },
  orgId: 'org_aws',
  toolCalls: [
    { tool: 'list_instances', args: { limit: 100 } },
    { tool: 'list_auto_scaling_groups', args: { limit: 100 } },
    { tool: 'list_ecs_services', args: { limit: 100 } },
    { tool: 'list_lambda_functions', args: { limit: 100 } },
    { tool: 'alarms_in_alarm', args: { limit: 100 } },
    {
      tool: 'metric_datapoints',
      args: { namespace: 'AWS/EC2', metric_name: 'CPUUtilization', dimensions: {}, statistic: 'Average', minutes: 60, period_seconds: 60 },
    },
    { tool: 'cloudtrail_events', args: { resource_name: 'nothing-here', hours: 24, limit: 50 } },
    { tool: 'reboot_instance', args: { instance_id: 'i-0a1b2c3d4e5f60003' } },
    { tool: 'scale_ecs_service', args: { cluster: 'prod', service: 'ghost', desired_count: 1 }, expect: { error_code: 'not_found' } },
    { tool: 'set_alarm_state', args: { alarm_name: 'ghost', state: 'OK', reason: 'kit' }, expect: { error_code: 'not_found' } },
  ],
});

describe('aws validate', () => {
  it('answers who the keys are (STS GetCallerIdentity, query protocol, SigV4 signed)', async () => {
    const before = fake.requests.length;
    expect(await plugin.validate(config, new AbortController().signal)).toEqual({
      ok: true,
      details: { account: '123456789012', arn: 'arn:aws:iam::123456789012:user/sre-agent', user_id: 'AIDAFAKEUSER00000001' },
    });
    expect(requestsSince(before)).toEqual([
      expect.objectContaining({
        service: 'sts',
        region: 'us-east-1',
        operation: 'GetCallerIdentity',
        status: 200,
        contentType: expect.stringContaining('application/x-www-form-urlencoded'),
      }),
    ]);
  });

  it('refuses a wrong secret and an unknown key id with the reason', async () => {
    expect(await plugin.validate({ ...config, secret_access_key: 'wrong' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'unauthorized', aws_code: 'SignatureDoesNotMatch', status: 403 },
    });
    expect(await plugin.validate({ ...config, access_key_id: 'AKIAUNKNOWNKEY000000' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'unauthorized', aws_code: 'InvalidClientTokenId' },
    });
  });

  it('assumes the role when one is named, and calls with its temporary credentials', async () => {
    const withRole = { ...config, role_arn: ROLE_ARN, external_id: ROLE_EXTERNAL_ID };
    const before = fake.requests.length;
    expect(await plugin.validate(withRole, new AbortController().signal)).toMatchObject({
      ok: true,
      details: { arn: 'arn:aws:sts::123456789012:assumed-role/agent-read/agent-context-service' },
    });
    const [assume, identity] = requestsSince(before);
    expect(assume).toMatchObject({ operation: 'AssumeRole', accessKeyId: GOOD_KEY.id, input: { RoleArn: ROLE_ARN, ExternalId: ROLE_EXTERNAL_ID } });
    expect(identity).toMatchObject({ operation: 'GetCallerIdentity', accessKeyId: expect.stringMatching(/^ASIA/) });
    // the temporary credentials are reused while they last
    await plugin.validate(withRole, new AbortController().signal);
    expect(requestsSince(before).filter((r) => r.operation === 'AssumeRole')).toHaveLength(1);

    const wrongExternalId = await plugin.validate({ ...withRole, external_id: 'someone-else' }, new AbortController().signal);
    expect(wrongExternalId).toMatchObject({ ok: false, details: { reason: 'forbidden', aws_code: 'AccessDenied' } });
  });

  it('says when the endpoint cannot be reached', async () => {
    expect(await plugin.validate({ ...config, endpoint: 'http://127.0.0.1:9' }, new AbortController().signal)).toMatchObject({
      ok: false,
      details: { reason: 'upstream_unreachable' },
    });
  });
});

describe('aws read tools', () => {
  it('lists instances of every region, filtered by state and tag (EC2 query protocol)', async () => {
    const all = await run('list_instances', {});
    expect(all.result.items.map((i: any) => `${i.region} ${i.instance_id} ${i.state}`)).toEqual([
      'us-east-1 i-0a1b2c3d4e5f60001 running',
      'us-east-1 i-0a1b2c3d4e5f60002 running',
      'us-east-1 i-0a1b2c3d4e5f60003 stopped',
      'us-east-1 i-0a1b2c3d4e5f60004 terminated',
      'eu-west-1 i-0eeeeeeeeeeee0005 running',
    ]);
    expect(all.result.items[0]).toMatchObject({
      name: 'checkout-1',
      type: 'm6i.large',
      availability_zone: 'us-east-1a',
      private_ip: '10.0.1.10',
      tags: { service: 'checkout' },
    });
    expect(all.result.items[0].launched_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const before = fake.requests.length;
    const running = await run('list_instances', { region: 'us-east-1', state: ['running'], tags: { service: 'checkout' } });
    expect(running.result).toEqual({
      items: [expect.objectContaining({ name: 'checkout-1' }), expect.objectContaining({ name: 'checkout-2' })],
      truncated: false,
    });
    expect(requestsSince(before)[0]!.input).toMatchObject({
      Action: 'DescribeInstances',
      'Filter.1.Name': 'instance-state-name',
      'Filter.1.Value.1': 'running',
      'Filter.2.Name': 'tag:service',
      'Filter.2.Value.1': 'checkout',
    });
  });

  it('pages through instances up to the limit and says the list was truncated', async () => {
    const outcome = await run('list_instances', { region: 'us-east-1', limit: 2 });
    expect(outcome.result).toMatchObject({ items: [{ instance_id: 'i-0a1b2c3d4e5f60001' }, { instance_id: 'i-0a1b2c3d4e5f60002' }], truncated: true });
  });

  it('refuses a region the source does not cover', async () => {
    expect((await run('list_instances', { region: 'ap-south-1' })).error).toMatchObject({
      code: 'invalid_arguments',
      details: { issues: [{ path: '/region' }] },
    });
  });

  it('lists Auto Scaling groups with in-service and unhealthy counts (query protocol)', async () => {
    const outcome = await run('list_auto_scaling_groups', { region: 'us-east-1' });
    expect(outcome.result.items).toEqual([
      expect.objectContaining({
        name: 'checkout-asg',
        min_size: 2,
        max_size: 6,
        desired_capacity: 3,
        in_service: 2,
        unhealthy: 1,
        tags: { service: 'checkout' },
      }),
    ]);
    expect(outcome.result.items[0].instances[1]).toEqual({
      instance_id: 'i-0a1b2c3d4e5f60002',
      lifecycle_state: 'InService',
      health_status: 'Unhealthy',
      availability_zone: 'us-east-1b',
    });
  });

  it('lists ECS services with their deployments and events (JSON 1.1)', async () => {
    const before = fake.requests.length;
    const outcome = await run('list_ecs_services', { region: 'us-east-1' });
    const orders = outcome.result.items.find((s: any) => s.name === 'orders-api');
    expect(orders).toMatchObject({
      cluster: 'prod',
      desired_count: 4,
      running_count: 2,
      pending_count: 1,
      task_definition: 'orders-api:42',
      tags: { service: 'orders' },
    });
    expect(orders.deployments[0]).toMatchObject({ status: 'PRIMARY', rollout_state: 'IN_PROGRESS', failed_tasks: 6, task_definition: 'orders-api:42' });
    expect(orders.recent_events[0].message).toContain('Essential container in task exited');
    const targets = requestsSince(before).map((r) => r.target);
    expect(targets).toEqual([
      'AmazonEC2ContainerServiceV20141113.ListClusters',
      'AmazonEC2ContainerServiceV20141113.ListServices',
      'AmazonEC2ContainerServiceV20141113.DescribeServices',
    ]);
    expect(requestsSince(before)[0]!.contentType).toBe('application/x-amz-json-1.1');
  });

  it('lists Lambda functions (REST-JSON), narrowed by name', async () => {
    const outcome = await run('list_lambda_functions', { region: 'us-east-1', name_contains: 'ORDERS' });
    expect(outcome.result.items).toEqual([
      expect.objectContaining({
        name: 'orders-webhook',
        runtime: 'nodejs20.x',
        memory_mb: 512,
        timeout_s: 30,
        arn: 'arn:aws:lambda:us-east-1:123456789012:function:orders-webhook',
      }),
    ]);
    expect(fake.requests.at(-1)).toMatchObject({ service: 'lambda', operation: expect.stringMatching(/^GET \/2015-03-31\/functions\/?$/) });
  });

  it('lists the alarms in ALARM (CloudWatch JSON 1.0)', async () => {
    const before = fake.requests.length;
    const outcome = await run('alarms_in_alarm', {});
    expect(outcome.result.items.map((a: any) => a.name)).toEqual(['checkout-1-cpu-high', 'orders-api-running-low']);
    expect(outcome.result.items[0]).toMatchObject({
      state: 'ALARM',
      namespace: 'AWS/EC2',
      metric: 'CPUUtilization',
      dimensions: { InstanceId: 'i-0a1b2c3d4e5f60001' },
      threshold: 90,
    });
    expect(requestsSince(before)[0]).toMatchObject({
      target: 'GraniteServiceVersion20100801.DescribeAlarms',
      contentType: 'application/x-amz-json-1.0',
      input: { StateValue: 'ALARM' },
    });
  });

  it("reads a metric's datapoints of the last minutes, oldest first", async () => {
    const outcome = await run('metric_datapoints', {
      namespace: 'AWS/EC2',
      metric_name: 'CPUUtilization',
      dimensions: { InstanceId: 'i-0a1b2c3d4e5f60001' },
      minutes: 60,
    });
    expect(outcome.result).toMatchObject({ region: 'us-east-1', statistic: 'Average', period_seconds: 60 });
    expect(outcome.result.datapoints.map((p: any) => p.value)).toEqual([40, 71.5, 96.4, 97.1]);
    expect(outcome.result.datapoints[0]).toMatchObject({ unit: 'Percent', timestamp: expect.stringMatching(/Z$/) });
    const wide = await run('metric_datapoints', { namespace: 'AWS/EC2', metric_name: 'CPUUtilization', minutes: 10080 });
    expect(wide.result.period_seconds).toBe(420);
  });

  it('reads CloudTrail events of a resource, newest first (JSON 1.1)', async () => {
    const outcome = await run('cloudtrail_events', { resource_name: 'i-0a1b2c3d4e5f60001', hours: 72 });
    expect(outcome.result.items.map((e: any) => `${e.name} by ${e.username}`)).toEqual(['ModifyInstanceAttribute by deploy-bot', 'RebootInstances by alice']);
    expect(outcome.result.items[0]).toMatchObject({
      read_only: false,
      source: 'ec2.amazonaws.com',
      resources: [{ type: 'AWS::EC2::Instance', name: 'i-0a1b2c3d4e5f60001' }],
    });
    expect(fake.requests.at(-1)!.target).toMatch(/LookupEvents$/);
    expect((await run('cloudtrail_events', { resource_name: 'i-0a1b2c3d4e5f60001', hours: 1 })).result.items).toHaveLength(1);
  });

  it('gives the model unauthorized when the keys are refused', async () => {
    expect((await run('list_ecs_services', {}, { ...config, secret_access_key: 'wrong' })).error).toMatchObject({
      code: 'unauthorized',
      details: { service: 'ECS', aws_code: 'InvalidSignatureException', status: 403 },
    });
    expect((await run('list_lambda_functions', {}, { ...config, access_key_id: 'AKIAUNKNOWNKEY000000' })).error).toMatchObject({
      code: 'unauthorized',
      details: { aws_code: 'UnrecognizedClientException' },
    });
  });
});

describe('aws write tools', () => {
  it('reboots an instance, and answers not_found for an unknown one', async () => {
    expect((await run('reboot_instance', { instance_id: 'i-0a1b2c3d4e5f60001' })).result).toEqual({
      instance_id: 'i-0a1b2c3d4e5f60001',
      region: 'us-east-1',
      reboot_requested: true,
    });
    expect(fake.effects).toEqual(['ec2:RebootInstances us-east-1 i-0a1b2c3d4e5f60001']);
    expect((await run('reboot_instance', { instance_id: 'i-0fffffffffffffff0' })).error).toMatchObject({
      code: 'not_found',
      details: { aws_code: 'InvalidInstanceID.NotFound' },
    });
  });

  it('scales an ECS service', async () => {
    const outcome = await run('scale_ecs_service', { cluster: 'prod', service: 'mailer', desired_count: 3 });
    expect(outcome.result).toMatchObject({ name: 'mailer', desired_count: 3 });
    expect(fake.effects).toEqual(['ecs:UpdateService us-east-1 prod/mailer desiredCount=3']);
    expect((await run('scale_ecs_service', { cluster: 'nope', service: 'mailer', desired_count: 1 })).error).toMatchObject({
      code: 'not_found',
      details: { aws_code: 'ClusterNotFoundException' },
    });
  });

  it("sets an alarm's state; an unknown alarm is not_found (query-compatible JSON error)", async () => {
    expect((await run('set_alarm_state', { alarm_name: 'orders-webhook-errors', state: 'ALARM', reason: 'testing the pager' })).result).toEqual({
      alarm_name: 'orders-webhook-errors',
      region: 'us-east-1',
      state: 'ALARM',
    });
    expect(fake.state.alarms.find((a) => a.name === 'orders-webhook-errors')).toMatchObject({ state: 'ALARM', reason: 'testing the pager' });
    fake.state.alarms.find((a) => a.name === 'orders-webhook-errors')!.state = 'OK';
    expect((await run('set_alarm_state', { alarm_name: 'ghost', state: 'OK', reason: 'x' })).error).toMatchObject({
      code: 'not_found',
      details: { aws_code: 'ResourceNotFound', status: 404 },
    });
  });
});

describe('aws sync', () => {
  it('writes instances, ECS services, functions and alarms, linked to services and to what the alarms watch', async () => {
    const graph = new ListGraphSink();
    const progress: number[] = [];
    const report = await plugin.sync!({
      orgId: 'org_aws',
      sourceId: 'src_aws',
      realm: 'default',
      config,
      signal: new AbortController().signal,
      graph,
      progress: (f) => progress.push(f),
    });
    const keys = (label: string) => graph.nodes.filter((n) => n.label === label).map((n) => n.properties._key);
    expect(keys('Instance')).toEqual([
      'arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60001',
      'arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60002',
      'arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60003',
      'arn:aws:ec2:eu-west-1:123456789012:instance/i-0eeeeeeeeeeee0005',
    ]);
    expect(keys('EcsService')).toEqual([
      'arn:aws:ecs:us-east-1:123456789012:service/prod/orders-api',
      'arn:aws:ecs:us-east-1:123456789012:service/prod/mailer',
    ]);
    expect(keys('LambdaFunction')).toEqual([
      'arn:aws:lambda:us-east-1:123456789012:function:orders-webhook',
      'arn:aws:lambda:us-east-1:123456789012:function:nightly-report',
    ]);
    expect(keys('Alarm')).toHaveLength(3);
    expect(keys('Service').sort()).toEqual(['checkout', 'orders', 'search']);
    const rel = (type: string) =>
      graph.relationships.filter((r) => r.type === type).map((r) => `${r.from_key.split(/[/:]/).pop()}->${r.to_key.split(/[/:]/).pop()}`);
    expect(rel('RUNS').sort()).toEqual([
      'i-0a1b2c3d4e5f60001->checkout',
      'i-0a1b2c3d4e5f60002->checkout',
      'i-0eeeeeeeeeeee0005->search',
      'orders-api->orders',
      'orders-webhook->orders',
    ]);
    expect(rel('MONITORS').sort()).toEqual([
      'checkout-1-cpu-high->i-0a1b2c3d4e5f60001',
      'orders-api-running-low->orders-api',
      'orders-webhook-errors->orders-webhook',
    ]);
    expect(graph.nodes.find((n) => n.label === 'Instance')!.properties).toMatchObject({
      name: 'checkout-1',
      state: 'running',
      region: 'us-east-1',
      account: '123456789012',
      source: 'aws',
    });
    expect(report).toEqual({
      nodes: graph.nodes.length,
      relationships: graph.relationships.length,
      details: { account: '123456789012', regions: 2, instances: 4, ecs_services: 2, lambda_functions: 2, alarms: 3, services: 3 },
    });
    expect(progress.at(-1)).toBe(1);
  });
});
