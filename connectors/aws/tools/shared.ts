/** What the aws tools share: the `region` and `limit` arguments and how a tool picks its regions. */
import { ToolError, type ToolContext } from '../../contract.js';
import { awsSession, type AwsSession } from '../client.js';
import type { Read } from '../read.js';
import { REGION_PATTERN } from '../config.js';

export const regionProperty = {
  type: 'string',
  pattern: REGION_PATTERN,
  description: "one of the source's regions; omit for all of them (list tools) or the first (tools on one resource)",
} as const;

export const limitProperty = (max: number, fallback: number) =>
  ({
    type: 'integer',
    minimum: 1,
    maximum: max,
    default: fallback,
    description: `at most this many items (per region); \`truncated\` says when there were more`,
  }) as const;

function checkedRegion(session: AwsSession, region: string): string {
  if (!session.config.regions.includes(region)) {
    throw new ToolError('invalid_arguments', `region ${region} is not one of this source's regions (${session.config.regions.join(', ')})`, {
      issues: [{ path: '/region', message: `must be one of ${session.config.regions.join(', ')}` }],
    });
  }
  return region;
}

/** the regions a list tool reads: the one asked for, else every configured one */
const regionsOf = (session: AwsSession, args: Record<string, unknown>): readonly string[] =>
  typeof args['region'] === 'string' ? [checkedRegion(session, args['region'])] : session.config.regions;

/** the region a tool on one resource acts in: the one asked for, else the first configured */
export const regionOf = (session: AwsSession, args: Record<string, unknown>): string =>
  checkedRegion(session, typeof args['region'] === 'string' ? args['region'] : (session.config.regions[0] ?? ''));

/** the source's session for a tool call (assumes its role first when it names one) */
export function sessionOf(ctx: ToolContext): Promise<AwsSession> {
  ctx.signal.throwIfAborted();
  return awsSession(ctx.config, ctx.net, ctx.signal);
}

/** A list tool's answer: `read` in each region it covers, each item shown with `view`. */
export async function listAcrossRegions<T>(
  session: AwsSession,
  args: Record<string, unknown>,
  read: (region: string) => Promise<Read<T>>,
  view: (item: T, region: string) => Record<string, unknown>,
): Promise<{ items: Record<string, unknown>[]; truncated: boolean }> {
  const items: Record<string, unknown>[] = [];
  let truncated = false;
  for (const region of regionsOf(session, args)) {
    const found = await read(region);
    items.push(...found.items.map((item) => view(item, region)));
    truncated ||= found.truncated;
  }
  return { items, truncated };
}
