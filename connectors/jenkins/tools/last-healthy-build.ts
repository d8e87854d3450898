/** jenkins.last_healthy_build: the last successful and stable builds of a job, against its last build. */
import type { ConnectorTool } from '../../contract.js';
import { BUILD_TREE, presentBuild, type JenkinsBuild } from '../builds.js';
import { JOB_ARG, jobPath } from '../config.js';
import { withJenkins } from './shared.js';

interface JobHealth {
  readonly lastBuild?: JenkinsBuild | null;
  readonly lastSuccessfulBuild?: JenkinsBuild | null;
  readonly lastStableBuild?: JenkinsBuild | null;
  readonly lastFailedBuild?: JenkinsBuild | null;
}

export const lastHealthyBuildTool: ConnectorTool = {
  name: 'last_healthy_build',
  effect: 'read',
  description:
    'The last healthy builds of a Jenkins job: last successful (may have failing tests) and last stable (all green), next to the last build and last failed build, ' +
    'to tell since when a job is broken and which build to compare against. Each is null when there is none.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['job'],
    properties: { job: JOB_ARG },
  },
  run: (args, ctx) =>
    withJenkins(ctx, async (client) => {
      const fields = ['lastBuild', 'lastSuccessfulBuild', 'lastStableBuild', 'lastFailedBuild'] as const;
      const { data } = await client.json<JobHealth>({
        path: `${jobPath(args['job'] as string)}/api/json`,
        query: { tree: fields.map((field) => `${field}[${BUILD_TREE}]`).join(',') },
        signal: ctx.signal,
      });
      const of = (build: JenkinsBuild | null | undefined) => (build ? presentBuild(build) : null);
      const lastBuild = of(data?.lastBuild);
      const lastSuccessful = of(data?.lastSuccessfulBuild);
      return {
        job: args['job'],
        last_build: lastBuild,
        last_successful_build: lastSuccessful,
        last_stable_build: of(data?.lastStableBuild),
        last_failed_build: of(data?.lastFailedBuild),
        // how many builds ran since it was last healthy (0: the last build is the healthy one)
        builds_since_success: lastBuild && lastSuccessful ? lastBuild.number - lastSuccessful.number : null,
      };
    }),
};
