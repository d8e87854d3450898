/** github.list_workflow_runs: GitHub Actions runs of a repository, e.g. the failed ones. */
import type { ConnectorTool } from '../../contract.js';
import { collect, limitArg, REPO_ARG, repoOf, withGithub } from './shared.js';

const STATUSES = [
  'completed',
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'skipped',
  'stale',
  'success',
  'timed_out',
  'in_progress',
  'queued',
  'requested',
  'waiting',
  'pending',
] as const;

export const listWorkflowRunsTool: ConnectorTool = {
  name: 'list_workflow_runs',
  effect: 'read',
  description:
    'List GitHub Actions workflow runs of a repository, newest first. `status: "failure"` gives the failed runs (CI breakages); filter by branch or triggering event. ' +
    'Returns `items` with id, workflow name, branch, commit sha, event, status, conclusion, attempt, actor, created time and url; `total_count` as GitHub reports it.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo'],
    properties: {
      repo: REPO_ARG,
      status: { enum: [...STATUSES], description: 'a status or conclusion, e.g. failure, success, in_progress' },
      branch: { type: 'string', minLength: 1, description: 'only runs on this branch' },
      event: { type: 'string', minLength: 1, description: 'only runs triggered by this event, e.g. push, pull_request' },
      limit: limitArg(20, 300),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      let totalCount: number | null = null;
      const pages = octokit.paginate.iterator(octokit.rest.actions.listWorkflowRunsForRepo, {
        owner,
        repo,
        ...(typeof args['status'] === 'string' ? { status: args['status'] as (typeof STATUSES)[number] } : {}),
        ...(typeof args['branch'] === 'string' ? { branch: args['branch'] } : {}),
        ...(typeof args['event'] === 'string' ? { event: args['event'] } : {}),
        per_page: 100,
        request: { signal: ctx.signal },
      });
      // paginate flattens `{ total_count, workflow_runs }` into an array and keeps total_count beside it
      const counted = (async function* () {
        for await (const page of pages) {
          totalCount ??= (page.data as unknown as { total_count?: number }).total_count ?? null;
          yield page;
        }
      })();
      const { items, truncated } = await collect(counted, args['limit'] as number);
      return {
        repo: `${owner}/${repo}`,
        total_count: totalCount,
        items: items.map((run) => ({
          id: run.id,
          workflow: run.name ?? null,
          branch: run.head_branch,
          head_sha: run.head_sha,
          event: run.event,
          status: run.status,
          conclusion: run.conclusion,
          attempt: run.run_attempt ?? 1,
          actor: run.actor?.login ?? null,
          created_at: run.created_at,
          url: run.html_url,
        })),
        truncated,
      };
    }),
};
