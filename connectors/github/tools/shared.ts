/** What every github tool shares: the client call wrapper, the `repo` argument, bounded pagination. */
import type { Octokit } from '@octokit/rest';
import { ToolError, type JsonSchema, type ToolContext } from '../../contract.js';
import { githubClient, githubFailure } from '../client.js';
import { githubConfigOf, type GithubConfig } from '../config.js';

export const REPO_ARG: JsonSchema = { type: 'string', pattern: '^[^/\\s]+/[^/\\s]+$', description: 'the repository as owner/name, e.g. acme/api' };

export const limitArg = (defaultLimit: number, maximum: number): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  maximum,
  default: defaultLimit,
  description: `how many items at most (default ${defaultLimit})`,
});

/** Runs `work` with the source's Octokit; any failure becomes a ToolError (aborts pass through). */
export async function withGithub<T>(ctx: ToolContext, work: (octokit: Octokit, config: GithubConfig) => Promise<T>): Promise<T> {
  ctx.signal.throwIfAborted();
  const config = githubConfigOf(ctx.config);
  try {
    return await work(await githubClient(config, ctx.signal, ctx.net), config);
  } catch (error) {
    throw githubFailure(error, ctx.signal);
  }
}

/**
 * `owner/name`, refused when the source lists orgs or repositories and this
 * one is not among them (a source only reaches what it was configured for).
 */
export function repoOf(args: Record<string, unknown>, config: GithubConfig): { owner: string; repo: string } {
  const full = String(args['repo']);
  const [owner = '', repo = ''] = full.split('/');
  const scoped = config.orgs.length > 0 || config.repositories.length > 0;
  const covered =
    config.orgs.some((org) => org.toLowerCase() === owner.toLowerCase()) ||
    config.repositories.some((candidate) => candidate.toLowerCase() === full.toLowerCase());
  if (scoped && !covered) {
    throw new ToolError('repository_not_in_source', `${full} is not covered by this source`, { orgs: config.orgs, repositories: config.repositories });
  }
  return { owner, repo };
}

/** Walks pages until `limit` items passed `keep` (or `stop` says the rest cannot match); stops fetching early. */
export async function collect<T>(
  pages: AsyncIterable<{ data: T[] }>,
  limit: number,
  keep: (item: T) => boolean = () => true,
  stop: (item: T) => boolean = () => false,
): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = [];
  for await (const page of pages) {
    for (const item of page.data) {
      if (stop(item)) return { items, truncated: false };
      if (!keep(item)) continue;
      if (items.length === limit) return { items, truncated: true };
      items.push(item);
    }
  }
  return { items, truncated: false };
}

export const DAY_MS = 86_400_000;

/** ISO date-time arguments (`since`, `until`). */
export const DATE_ARG = (what: string): JsonSchema => ({ type: 'string', format: 'date-time', description: what });

/**
 * Pages of `GET /repos/{owner}/{repo}/commits` filtered by the tool arguments both commit tools
 * take (`branch` as `sha`, `since`, `until`, `path`, and `author` when the tool offers it).
 */
export function commitPages(octokit: Octokit, owner: string, repo: string, args: Record<string, unknown>, signal: AbortSignal) {
  const optional = (name: string): Record<string, string> => (typeof args[name] === 'string' ? { [name]: args[name] } : {});
  return octokit.paginate.iterator(octokit.rest.repos.listCommits, {
    owner,
    repo,
    ...(typeof args['branch'] === 'string' ? { sha: args['branch'] } : {}),
    ...optional('since'),
    ...optional('until'),
    ...optional('author'),
    ...optional('path'),
    per_page: 100,
    request: { signal },
  });
}
