/** The repositories a github source covers: its orgs' repositories, its single repositories, or what the credentials reach. */
import type { Octokit } from '@octokit/rest';
import type { GithubConfig } from './config.js';
import { collect } from './tools/shared.js';

/** The fields of GitHub's repository object the connector reads. */
export interface GithubRepository {
  readonly full_name: string;
  readonly name: string;
  readonly owner: { readonly login: string; readonly type?: string; readonly html_url?: string };
  readonly description?: string | null;
  readonly default_branch?: string;
  readonly language?: string | null;
  readonly private: boolean;
  readonly archived?: boolean;
  readonly pushed_at?: string | null;
  readonly html_url: string;
}

export async function listSourceRepositories(
  octokit: Octokit,
  config: GithubConfig,
  signal: AbortSignal,
  limit: number,
  onlyOrg?: string,
): Promise<{ repositories: GithubRepository[]; truncated: boolean }> {
  const found = new Map<string, GithubRepository>();
  let truncated = false;
  const add = (repos: readonly GithubRepository[]): void => {
    for (const repo of repos) {
      if (onlyOrg !== undefined && repo.owner.login.toLowerCase() !== onlyOrg.toLowerCase()) continue;
      if (found.size >= limit) {
        truncated = true;
        return;
      }
      found.set(repo.full_name.toLowerCase(), repo);
    }
  };
  const request = { signal };
  const orgs = onlyOrg === undefined ? config.orgs : config.orgs.filter((org) => org.toLowerCase() === onlyOrg.toLowerCase());
  for (const org of orgs) {
    const page = await collect(octokit.paginate.iterator(octokit.rest.repos.listForOrg, { org, per_page: 100, request }), limit - found.size + 1);
    add(page.items);
  }
  for (const full of config.repositories) {
    if (found.has(full.toLowerCase())) continue;
    const [owner = '', repo = ''] = full.split('/');
    if (onlyOrg !== undefined && owner.toLowerCase() !== onlyOrg.toLowerCase()) continue;
    const { data } = await octokit.rest.repos.get({ owner, repo, request });
    add([data]);
  }
  if (config.orgs.length === 0 && config.repositories.length === 0) {
    const pages =
      config.auth.kind === 'app'
        ? octokit.paginate.iterator(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100, request })
        : octokit.paginate.iterator(octokit.rest.repos.listForAuthenticatedUser, { per_page: 100, request });
    const page = await collect(pages as AsyncIterable<{ data: GithubRepository[] }>, limit + 1);
    add(page.items);
  }
  return { repositories: [...found.values()], truncated };
}
