/** Vercel deployments and build logs as the tools and the sync present them, with `until` pagination. */
import { isoOf, type VercelApi } from './config.js';

/** A deployment in GET /v6/deployments. */
export interface VercelDeploymentListed {
  readonly uid: string;
  readonly name: string;
  readonly url: string | null;
  readonly state?: string;
  readonly readyState?: string;
  readonly target?: string | null;
  readonly projectId?: string;
  readonly created: number;
  readonly ready?: number | null;
  readonly inspectorUrl?: string | null;
  readonly creator?: { readonly uid: string; readonly username?: string; readonly githubLogin?: string } | null;
  readonly meta?: Readonly<Record<string, string>>;
}

interface Pagination {
  readonly count: number;
  /** pass as `until` for the next (older) page; null on the last page */
  readonly next: number | string | null;
}

export interface DeploymentFilter {
  readonly project?: string;
  readonly target?: 'production' | 'preview';
  /** Vercel states, e.g. READY, ERROR, BUILDING, QUEUED, CANCELED */
  readonly state?: string;
  /** epoch ms */
  readonly since?: number;
}

export interface PresentedDeployment {
  id: string;
  project: string;
  project_id: string | null;
  url: string | null;
  state: string | null;
  target: string;
  created_at: string | null;
  ready_at: string | null;
  creator: string | null;
  branch: string | null;
  commit_sha: string | null;
  commit_message: string | null;
  inspector_url: string | null;
}

export function presentDeployment(deployment: VercelDeploymentListed): PresentedDeployment {
  const meta = deployment.meta ?? {};
  return {
    id: deployment.uid,
    project: deployment.name,
    project_id: deployment.projectId ?? null,
    url: deployment.url ? `https://${deployment.url}` : null,
    state: deployment.state ?? deployment.readyState ?? null,
    target: deployment.target ?? 'preview',
    created_at: isoOf(deployment.created),
    ready_at: isoOf(deployment.ready),
    creator: deployment.creator?.githubLogin ?? deployment.creator?.username ?? null,
    branch: meta['githubCommitRef'] ?? meta['gitlabCommitRef'] ?? meta['bitbucketCommitRef'] ?? null,
    commit_sha: meta['githubCommitSha'] ?? meta['gitlabCommitSha'] ?? meta['bitbucketCommitSha'] ?? null,
    commit_message: (meta['githubCommitMessage'] ?? meta['gitlabCommitMessage'] ?? meta['bitbucketCommitMessage'] ?? null)?.split('\n')[0] ?? null,
    inspector_url: deployment.inspectorUrl ?? null,
  };
}

const PAGE = 100;

/** Deployments newest first, following `pagination.next` as `until` until `limit` are found. */
export async function listDeployments(
  api: VercelApi,
  signal: AbortSignal,
  filter: DeploymentFilter,
  limit: number,
): Promise<{ items: VercelDeploymentListed[]; truncated: boolean }> {
  const items: VercelDeploymentListed[] = [];
  let until: number | string | undefined;
  for (;;) {
    const page = await api.get<{ deployments: VercelDeploymentListed[]; pagination?: Pagination }>('/v6/deployments', signal, {
      limit: Math.min(PAGE, limit - items.length + 1),
      projectId: filter.project,
      target: filter.target,
      state: filter.state,
      since: filter.since,
      until,
    });
    for (const deployment of page.deployments) {
      if (items.length === limit) return { items, truncated: true };
      items.push(deployment);
    }
    const next = page.pagination?.next ?? null;
    if (next === null || page.deployments.length === 0) return { items, truncated: false };
    until = next;
  }
}

/** One build log event of GET /v3/deployments/:id/events. */
interface VercelEvent {
  readonly type: string;
  readonly created: number;
  readonly text?: string;
  readonly payload?: { readonly text?: string; readonly date?: number };
}

/** The last `lines` lines of a deployment's build output (stdout, stderr, commands). */
export async function buildLogTail(api: VercelApi, signal: AbortSignal, deploymentId: string, lines: number): Promise<string[]> {
  const events = await api.get<VercelEvent[]>(`/v3/deployments/${encodeURIComponent(deploymentId)}/events`, signal, {
    builds: 1,
    limit: -1,
    direction: 'forward',
  });
  const text = (Array.isArray(events) ? events : [])
    .filter((event) => event.type === 'stdout' || event.type === 'stderr' || event.type === 'command' || event.type === 'fatal')
    .map((event) => event.payload?.text ?? event.text ?? '')
    .flatMap((chunk) => chunk.replace(/\n$/, '').split('\n'));
  return text.slice(-lines);
}
