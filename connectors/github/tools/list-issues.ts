/** github.list_issues: a repository's issues (pull requests left out). */
import type { ConnectorTool } from '../../contract.js';
import { collect, DATE_ARG, limitArg, REPO_ARG, repoOf, withGithub } from './shared.js';

export const listIssuesTool: ConnectorTool = {
  name: 'list_issues',
  effect: 'read',
  description:
    'List issues of a GitHub repository (open by default, most recently updated first), optionally by labels, assignee or update time. Pull requests are left out (use list_pull_requests). ' +
    'Returns `items` with number, title, state, author, assignees, labels, comment count, created/updated times and url.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo'],
    properties: {
      repo: REPO_ARG,
      state: { enum: ['open', 'closed', 'all'], default: 'open' },
      labels: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'only issues carrying all these labels' },
      assignee: { type: 'string', minLength: 1, description: 'a login, `none` or `*`' },
      since: DATE_ARG('only issues updated after this time (ISO 8601)'),
      limit: limitArg(30, 300),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      const labels = args['labels'] as string[] | undefined;
      const pages = octokit.paginate.iterator(octokit.rest.issues.listForRepo, {
        owner,
        repo,
        state: args['state'] as 'open' | 'closed' | 'all',
        sort: 'updated',
        direction: 'desc',
        ...(labels && labels.length > 0 ? { labels: labels.join(',') } : {}),
        ...(typeof args['assignee'] === 'string' ? { assignee: args['assignee'] } : {}),
        ...(typeof args['since'] === 'string' ? { since: args['since'] } : {}),
        per_page: 100,
        request: { signal: ctx.signal },
      });
      // GitHub's issues endpoint also returns pull requests (they carry `pull_request`)
      const { items, truncated } = await collect(pages, args['limit'] as number, (issue) => issue.pull_request === undefined);
      return {
        repo: `${owner}/${repo}`,
        items: items.map((issue) => ({
          number: issue.number,
          title: issue.title,
          state: issue.state,
          author: issue.user?.login ?? null,
          assignees: (issue.assignees ?? []).map((user) => user.login),
          labels: issue.labels.map((label) => (typeof label === 'string' ? label : (label.name ?? ''))),
          comments: issue.comments,
          created_at: issue.created_at,
          updated_at: issue.updated_at,
          url: issue.html_url,
        })),
        truncated,
      };
    }),
};
