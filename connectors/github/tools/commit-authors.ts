/** github.commit_authors: who committed to a repository in a time window, and how much. */
import type { ConnectorTool } from '../../contract.js';
import { collect, commitPages, DATE_ARG, limitArg, REPO_ARG, repoOf, withGithub } from './shared.js';

interface AuthorTally {
  login: string | null;
  name: string | null;
  commits: number;
  last_commit_at: string | null;
}

export const commitAuthorsTool: ConnectorTool = {
  name: 'commit_authors',
  effect: 'read',
  description:
    'Who committed to a GitHub repository (optionally on a branch and in a time window): each author with their commit count and latest commit time, most active first. ' +
    'Use it to find who knows a code base or who changed it recently. Counts at most `max_commits` recent commits (`truncated` says when there were more).',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo'],
    properties: {
      repo: REPO_ARG,
      branch: { type: 'string', minLength: 1, description: 'branch, tag or sha (default: the default branch)' },
      since: DATE_ARG('only commits after this time (ISO 8601)'),
      until: DATE_ARG('only commits before this time (ISO 8601)'),
      path: { type: 'string', minLength: 1, description: 'only commits touching this file or folder' },
      max_commits: limitArg(500, 2000),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      const pages = commitPages(octokit, owner, repo, args, ctx.signal);
      const { items, truncated } = await collect(pages, args['max_commits'] as number);
      const tallies = new Map<string, AuthorTally>();
      for (const commit of items) {
        const login = commit.author?.login ?? null;
        const name = commit.commit.author?.name ?? null;
        const date = commit.commit.author?.date ?? null;
        // commits whose email maps to no GitHub account are told apart by name
        const key = login ?? `name:${name ?? 'unknown'}`;
        const tally = tallies.get(key) ?? { login, name, commits: 0, last_commit_at: null };
        tally.commits += 1;
        if (date !== null && (tally.last_commit_at === null || date > tally.last_commit_at)) tally.last_commit_at = date;
        tallies.set(key, tally);
      }
      const authors = [...tallies.values()].sort((a, b) => b.commits - a.commits || (b.last_commit_at ?? '').localeCompare(a.last_commit_at ?? ''));
      return { repo: `${owner}/${repo}`, commits_counted: items.length, authors, truncated };
    }),
};
