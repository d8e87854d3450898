/** github.list_pull_requests: a repository's pull requests, optionally only the stale ones. */
import type { ConnectorTool } from '../../contract.js';
import { collect, DAY_MS, limitArg, REPO_ARG, repoOf, withGithub } from './shared.js';

export const listPullRequestsTool: ConnectorTool = {
  name: 'list_pull_requests',
  effect: 'read',
  description:
    'List pull requests of a GitHub repository (open by default). With `stale_days`, only open pull requests with no update for at least that many days, oldest first: use it to find stale or forgotten reviews. ' +
    'Returns `items` with number, title, author, draft, state, base/head branches, labels, created/updated times, `days_since_update` and url; `truncated` when more matched than `limit`.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo'],
    properties: {
      repo: REPO_ARG,
      state: { enum: ['open', 'closed', 'all'], default: 'open', description: 'which pull requests (ignored with stale_days: stale means open)' },
      stale_days: { type: 'integer', minimum: 1, maximum: 3650, description: 'only open pull requests not updated for this many days' },
      base: { type: 'string', minLength: 1, description: 'only pull requests into this branch' },
      limit: limitArg(30, 300),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      const staleDays = args['stale_days'] as number | undefined;
      // wall clock: pull request ages are measured against GitHub's timestamps
      const now = Date.now();
      const cutoff = staleDays === undefined ? null : now - staleDays * DAY_MS;
      const pages = octokit.paginate.iterator(octokit.rest.pulls.list, {
        owner,
        repo,
        state: cutoff === null ? (args['state'] as 'open' | 'closed' | 'all') : 'open',
        ...(typeof args['base'] === 'string' ? { base: args['base'] } : {}),
        // stale: least recently updated first, so the walk stops at the first fresh one
        sort: 'updated',
        direction: cutoff === null ? 'desc' : 'asc',
        per_page: 100,
        request: { signal: ctx.signal },
      });
      const { items, truncated } = await collect(
        pages,
        args['limit'] as number,
        () => true,
        (pr) => cutoff !== null && Date.parse(pr.updated_at) > cutoff,
      );
      return {
        repo: `${owner}/${repo}`,
        items: items.map((pr) => ({
          number: pr.number,
          title: pr.title,
          author: pr.user?.login ?? null,
          state: pr.state,
          draft: pr.draft ?? false,
          base: pr.base.ref,
          head: pr.head.ref,
          labels: pr.labels.map((label) => label.name),
          created_at: pr.created_at,
          updated_at: pr.updated_at,
          days_since_update: Math.floor((now - Date.parse(pr.updated_at)) / DAY_MS),
          url: pr.html_url,
        })),
        truncated,
      };
    }),
};
