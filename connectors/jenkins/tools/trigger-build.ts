/** jenkins.trigger_build (write): queues a build, with parameters, and reports its queue item. */
import { ToolError, type ConnectorTool } from '../../contract.js';
import type { HttpClient } from '../../shared/http-client.js';
import { JOB_ARG, jobPath } from '../config.js';
import { withJenkins } from './shared.js';

interface Crumb {
  readonly crumb: string;
  readonly crumbRequestField: string;
}

/**
 * CSRF protection: POSTs carry a crumb, valid only with the session cookie it
 * was issued for. A Jenkins without CSRF protection answers 404: no crumb needed.
 */
async function crumbHeaders(client: HttpClient, signal: AbortSignal): Promise<Record<string, string>> {
  try {
    const answer = await client.json<Crumb>({ path: '/crumbIssuer/api/json', signal });
    const cookies = answer.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .filter(Boolean);
    return { [answer.data.crumbRequestField]: answer.data.crumb, ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}) };
  } catch (error) {
    if (ToolError.is(error) && error.code === 'not_found') return {};
    throw error;
  }
}

export const triggerBuildTool: ConnectorTool = {
  name: 'trigger_build',
  effect: 'write',
  description:
    'Start a build of a Jenkins job, with build parameters for a parameterized job. Jenkins queues it: returns the queue item id and url, and why it waits (quiet period, busy executors) when Jenkins says. ' +
    'Use list_builds afterwards to follow the build.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['job'],
    properties: {
      job: JOB_ARG,
      parameters: {
        type: 'object',
        additionalProperties: { type: ['string', 'number', 'boolean'] },
        description: 'build parameters by name, e.g. {"BRANCH": "main"} (only for parameterized jobs)',
      },
    },
  },
  run: (args, ctx) =>
    withJenkins(ctx, async (client) => {
      const job = args['job'] as string;
      const parameters = (args['parameters'] as Record<string, string | number | boolean> | undefined) ?? {};
      const headers = await crumbHeaders(client, ctx.signal);
      const parameterized = Object.keys(parameters).length > 0;
      const form = new URLSearchParams(Object.entries(parameters).map(([name, value]) => [name, String(value)]));
      ctx.signal.throwIfAborted();
      const response = await client.send({
        method: 'POST',
        path: `${jobPath(job)}/${parameterized ? 'buildWithParameters' : 'build'}`,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
        signal: ctx.signal,
      });
      await response.body?.cancel();
      // 201 Created, Location: <jenkins>/queue/item/<id>/
      const location = response.headers.get('location');
      const id = location ? Number(/\/queue\/item\/(\d+)\/?$/.exec(location)?.[1]) : NaN;
      if (!Number.isInteger(id)) return { job, queued: true, queue_id: null, queue_url: location };
      const item = await client
        .json<{ why?: string | null; blocked?: boolean; executable?: { number: number; url: string } | null }>({
          path: `/queue/item/${id}/api/json`,
          signal: ctx.signal,
        })
        .then((answer) => answer.data)
        .catch(() => null);
      return {
        job,
        queued: true,
        queue_id: id,
        queue_url: location,
        why: item?.why ?? null,
        build: item?.executable ? { number: item.executable.number, url: item.executable.url } : null,
      };
    }),
};
