/** Vercel projects (GET /v10/projects), following `pagination.next` as `from`. */
import type { VercelApi } from './config.js';

export interface VercelProject {
  readonly id: string;
  readonly name: string;
  readonly framework?: string | null;
  readonly updatedAt?: number;
  readonly createdAt?: number;
  readonly link?: { readonly type?: string; readonly org?: string; readonly repo?: string; readonly productionBranch?: string } | null;
}

const PAGE = 100;

export async function listProjects(
  api: VercelApi,
  signal: AbortSignal,
  limit: number,
  search?: string,
): Promise<{ items: VercelProject[]; truncated: boolean }> {
  const items: VercelProject[] = [];
  let from: number | string | undefined;
  for (;;) {
    const page = await api.get<{ projects: VercelProject[]; pagination?: { next: number | string | null } }>('/v10/projects', signal, {
      limit: Math.min(PAGE, limit - items.length + 1),
      search,
      from,
    });
    for (const project of page.projects) {
      if (items.length === limit) return { items, truncated: true };
      items.push(project);
    }
    const next = page.pagination?.next ?? null;
    if (next === null || page.projects.length === 0) return { items, truncated: false };
    from = next;
  }
}
