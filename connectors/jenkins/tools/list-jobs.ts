/** jenkins.list_jobs: the jobs (and folders) of a Jenkins, with their status. */
import type { ConnectorTool } from '../../contract.js';
import { listJobs } from '../jobs.js';
import { withJenkins } from './shared.js';

export const listJobsTool: ConnectorTool = {
  name: 'list_jobs',
  effect: 'read',
  description:
    'List Jenkins jobs, descending into folders (and multibranch projects) up to `depth` levels, optionally from one folder. ' +
    'Returns `items` with full_name (use it in the other jenkins tools), kind (job/folder), status colour (blue = passing, red = failing, yellow = unstable, *_anime = running), last build and url.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      folder: { type: 'string', pattern: '^[^/]+(/[^/]+)*$', description: 'start in this folder (full name), default the root' },
      depth: { type: 'integer', minimum: 1, maximum: 5, default: 2, description: 'how many folder levels to descend' },
      limit: { type: 'integer', minimum: 1, maximum: 2000, default: 200, description: 'how many entries at most' },
    },
  },
  run: (args, ctx) =>
    withJenkins(ctx, async (client) => {
      const { jobs, truncated } = await listJobs(
        client,
        ctx.signal,
        (args['folder'] as string | undefined) ?? '',
        args['depth'] as number,
        args['limit'] as number,
      );
      return { items: jobs, truncated };
    }),
};
