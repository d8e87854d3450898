/** jenkins.list_builds: recent builds of a job with why they ran, optionally only the failed ones. */
import type { ConnectorTool } from '../../contract.js';
import { BUILD_TREE, FAILED_RESULTS, presentBuild, type JenkinsBuild, type PresentedBuild } from '../builds.js';
import { JOB_ARG, jobPath } from '../config.js';
import { withJenkins } from './shared.js';

const PAGE = 50;
/** how far back a failed-only search looks */
const MAX_SCANNED = 500;

export const listBuildsTool: ConnectorTool = {
  name: 'list_builds',
  effect: 'read',
  description:
    'List the recent builds of a Jenkins job, newest first, each with result (SUCCESS, FAILURE, UNSTABLE, ABORTED, null while running), start time, duration and causes (who or what started it: a user, an SCM change, a timer, an upstream build). ' +
    '`only_failed` keeps FAILURE and UNSTABLE builds (looking back at most 500 builds).',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['job'],
    properties: {
      job: JOB_ARG,
      only_failed: { type: 'boolean', default: false, description: 'only FAILURE and UNSTABLE builds' },
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 20, description: 'how many builds at most' },
    },
  },
  run: (args, ctx) =>
    withJenkins(ctx, async (client) => {
      const job = args['job'] as string;
      const onlyFailed = args['only_failed'] === true;
      const limit = args['limit'] as number;
      const items: PresentedBuild[] = [];
      // Jenkins pages a list with the tree range `builds[...]{from,to}`
      for (let from = 0; from < MAX_SCANNED; from += PAGE) {
        ctx.signal.throwIfAborted();
        const { data } = await client.json<{ builds?: JenkinsBuild[] }>({
          path: `${jobPath(job)}/api/json`,
          query: { tree: `builds[${BUILD_TREE}]{${from},${from + PAGE}}` },
          signal: ctx.signal,
        });
        const page = data?.builds ?? [];
        for (const build of page) {
          if (onlyFailed && !FAILED_RESULTS.has(build.result ?? '')) continue;
          if (items.length === limit) return { job, items, truncated: true };
          items.push(presentBuild(build));
        }
        if (page.length < PAGE || (!onlyFailed && items.length >= limit)) break;
      }
      return { job, items, truncated: false };
    }),
};
