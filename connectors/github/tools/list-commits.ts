/** github.list_commits: recent commits of a repository branch. */
import type { ConnectorTool } from '../../contract.js';
import { collect, commitPages, DATE_ARG, limitArg, REPO_ARG, repoOf, withGithub } from './shared.js';

export const listCommitsTool: ConnectorTool = {
  name: 'list_commits',
  effect: 'read',
  description:
    'List recent commits of a GitHub repository, newest first: on a branch (default: the default branch), in a time window, by an author or touching a path. ' +
    'Returns `items` with sha, the first line of the message, author login and name, date and url; `truncated` when more matched than `limit`.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo'],
    properties: {
      repo: REPO_ARG,
      branch: { type: 'string', minLength: 1, description: 'branch, tag or sha to list from' },
      since: DATE_ARG('only commits after this time (ISO 8601)'),
      until: DATE_ARG('only commits before this time (ISO 8601)'),
      author: { type: 'string', minLength: 1, description: 'GitHub login or email of the author' },
      path: { type: 'string', minLength: 1, description: 'only commits touching this file or folder' },
      limit: limitArg(30, 300),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      const pages = commitPages(octokit, owner, repo, args, ctx.signal);
      const { items, truncated } = await collect(pages, args['limit'] as number);
      return {
        repo: `${owner}/${repo}`,
        items: items.map((commit) => ({
          sha: commit.sha,
          message: commit.commit.message.split('\n')[0] ?? '',
          author_login: commit.author?.login ?? null,
          author_name: commit.commit.author?.name ?? null,
          date: commit.commit.author?.date ?? commit.commit.committer?.date ?? null,
          url: commit.html_url,
        })),
        truncated,
      };
    }),
};
