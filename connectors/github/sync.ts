/**
 * github sync (ETL). The graph model (keys are host-qualified, `github.com/...`
 * or the Enterprise host, so two GitHub instances never collide):
 *
 *   (:User {_key: host/login})            -[:OWNS]->            (:Repository {_key: host/owner/name})
 *   (:User)                               -[:AUTHORED]->        (:PullRequest {_key: host/owner/name#number})
 *   (:PullRequest)                        -[:TARGETS]->         (:Repository)
 *   (:User)                               -[:CONTRIBUTED_TO {commits}]-> (:Repository)   (from the latest commits)
 *
 * Open pull requests only (at most MAX_PULL_REQUESTS_PER_REPOSITORY per repository,
 * the capped repositories are named in the report); at most MAX_REPOSITORIES repositories.
 */
import type { Octokit } from '@octokit/rest';
import { GRAPH_WRITE_FAILED, ToolError, type GraphNodeInput, type GraphRelationshipInput, type SyncContext, type SyncReport } from '../contract.js';
import { githubClient, githubFailure } from './client.js';
import { githubConfigOf, githubHost } from './config.js';
import { listSourceRepositories, type GithubRepository } from './repositories.js';
import { collect } from './tools/shared.js';

const MAX_REPOSITORIES = 1000;
const MAX_PULL_REQUESTS_PER_REPOSITORY = 200;
const RECENT_COMMITS_PER_REPOSITORY = 100;

interface Batch {
  readonly nodes: GraphNodeInput[];
  readonly relationships: GraphRelationshipInput[];
}

function userNode(host: string, user: { login: string; type?: string; html_url?: string }): GraphNodeInput {
  return {
    label: 'User',
    properties: { _key: `${host}/${user.login}`, login: user.login, type: user.type ?? 'User', url: user.html_url ?? null, system: 'github' },
  };
}

async function repositoryBatch(
  octokit: Octokit,
  host: string,
  repo: GithubRepository,
  signal: AbortSignal,
): Promise<Batch & { pullRequests: number; pullRequestsTruncated: boolean }> {
  const repoKey = `${host}/${repo.full_name}`;
  const owner = repo.owner.login;
  const nodes: GraphNodeInput[] = [
    {
      label: 'Repository',
      properties: {
        _key: repoKey,
        name: repo.name,
        full_name: repo.full_name,
        description: repo.description ?? null,
        default_branch: repo.default_branch ?? null,
        language: repo.language ?? null,
        private: repo.private,
        archived: repo.archived ?? false,
        pushed_at: repo.pushed_at ?? null,
        url: repo.html_url,
        system: 'github',
      },
    },
    userNode(host, repo.owner),
  ];
  const relationships: GraphRelationshipInput[] = [{ type: 'OWNS', from_label: 'User', from_key: `${host}/${owner}`, to_label: 'Repository', to_key: repoKey }];
  const request = { signal };
  const pulls = await collect(
    octokit.paginate.iterator(octokit.rest.pulls.list, { owner, repo: repo.name, state: 'open', per_page: 100, request }),
    MAX_PULL_REQUESTS_PER_REPOSITORY,
  );
  for (const pr of pulls.items) {
    const prKey = `${repoKey}#${pr.number}`;
    nodes.push({
      label: 'PullRequest',
      properties: {
        _key: prKey,
        number: pr.number,
        title: pr.title,
        state: pr.state,
        draft: pr.draft ?? false,
        created_at: pr.created_at,
        updated_at: pr.updated_at,
        url: pr.html_url,
        system: 'github',
      },
    });
    relationships.push({
      type: 'TARGETS',
      from_label: 'PullRequest',
      from_key: prKey,
      to_label: 'Repository',
      to_key: repoKey,
      properties: { base: pr.base.ref },
    });
    if (pr.user) {
      nodes.push(userNode(host, pr.user));
      relationships.push({ type: 'AUTHORED', from_label: 'User', from_key: `${host}/${pr.user.login}`, to_label: 'PullRequest', to_key: prKey });
    }
  }
  // one page of the latest commits says who works on the repository now
  const { data: commits } = await octokit.rest.repos
    .listCommits({ owner, repo: repo.name, per_page: RECENT_COMMITS_PER_REPOSITORY, request })
    .catch((error: unknown) => {
      // an empty repository answers 409 "Git Repository is empty"
      if ((error as { status?: number }).status === 409) return { data: [] };
      throw error;
    });
  const contributions = new Map<string, { user: { login: string; type?: string; html_url?: string }; commits: number; last: string | null }>();
  for (const commit of commits) {
    const author = commit.author;
    if (!author || !('login' in author)) continue;
    const entry = contributions.get(author.login) ?? { user: { login: author.login, type: author.type, html_url: author.html_url }, commits: 0, last: null };
    entry.commits += 1;
    const date = commit.commit.author?.date ?? null;
    if (date !== null && (entry.last === null || date > entry.last)) entry.last = date;
    contributions.set(author.login, entry);
  }
  for (const { user, commits: count, last } of contributions.values()) {
    nodes.push(userNode(host, user));
    relationships.push({
      type: 'CONTRIBUTED_TO',
      from_label: 'User',
      from_key: `${host}/${user.login}`,
      to_label: 'Repository',
      to_key: repoKey,
      properties: { commits: count, last_commit_at: last },
    });
  }
  return { nodes: dedupe(nodes), relationships, pullRequests: pulls.items.length, pullRequestsTruncated: pulls.truncated };
}

/** one node per (label, _key): a user who owns and authors appears once per batch */
function dedupe(nodes: readonly GraphNodeInput[]): GraphNodeInput[] {
  return [...new Map(nodes.map((node) => [`${node.label}:${node.properties._key}`, node])).values()];
}

export async function syncGithub(ctx: SyncContext): Promise<SyncReport> {
  ctx.signal.throwIfAborted();
  const config = githubConfigOf(ctx.config);
  const host = githubHost(config);
  try {
    const octokit = await githubClient(config, ctx.signal, ctx.net);
    ctx.progress(0, 'listing repositories');
    const { repositories, truncated } = await listSourceRepositories(octokit, config, ctx.signal, MAX_REPOSITORIES);
    let nodes = 0;
    let relationships = 0;
    let pullRequests = 0;
    const users = new Set<string>();
    const capped: string[] = [];
    for (const [index, repo] of repositories.entries()) {
      ctx.signal.throwIfAborted();
      const batch = await repositoryBatch(octokit, host, repo, ctx.signal);
      await ctx.graph?.upsertNodes(batch.nodes);
      await ctx.graph?.upsertRelationships(batch.relationships);
      nodes += batch.nodes.length;
      relationships += batch.relationships.length;
      pullRequests += batch.pullRequests;
      if (batch.pullRequestsTruncated) capped.push(repo.full_name);
      for (const node of batch.nodes) if (node.label === 'User') users.add(node.properties._key);
      ctx.progress((index + 1) / repositories.length, `synced ${repo.full_name}`);
    }
    return {
      nodes,
      relationships,
      details: {
        repositories: repositories.length,
        pull_requests: pullRequests,
        users: users.size,
        repositories_truncated: truncated,
        pull_requests_capped: capped,
      },
    };
  } catch (error) {
    const mapped = githubFailure(error, ctx.signal);
    // the graph's own failure keeps its code and names the graph, not GitHub
    if (!ToolError.is(mapped) || mapped.code === GRAPH_WRITE_FAILED) throw mapped;
    throw new Error(`GitHub sync failed: ${mapped.message}`, { cause: mapped });
  }
}
