/**
 * vercel sync (ETL). The graph model (Vercel ids are globally unique, so they are the keys):
 *
 *   (:Project {_key: prj_...})  -[:HAS_DEPLOYMENT {production}]-> (:Deployment {_key: dpl_...})
 *   (:Project)                  -[:DEPLOYS_FROM]->                (:Repository {_key: github.com/org/repo})
 *
 * DEPLOYS_FROM uses the github connector's Repository key, so a project links
 * to the repository a github source syncs. The latest DEPLOYMENTS_PER_PROJECT
 * deployments of every project.
 */
import { ToolError, type GraphNodeInput, type GraphRelationshipInput, type SyncContext, type SyncReport } from '../contract.js';
import { isoOf, VercelApi, vercelConfigOf } from './config.js';
import { listDeployments, presentDeployment } from './deployments.js';
import { listProjects, type VercelProject } from './projects.js';

const MAX_PROJECTS = 1000;
const DEPLOYMENTS_PER_PROJECT = 20;

/** Git hosts whose repository keys the code-host connector uses */
const GIT_HOSTS: Readonly<Record<string, string>> = { github: 'github.com', gitlab: 'gitlab.com', bitbucket: 'bitbucket.org' };

function repositoryKey(project: VercelProject): string | null {
  const link = project.link;
  const host = link?.type ? GIT_HOSTS[link.type] : undefined;
  return host && link?.org && link.repo ? `${host}/${link.org}/${link.repo}` : null;
}

export async function syncVercel(ctx: SyncContext): Promise<SyncReport> {
  ctx.signal.throwIfAborted();
  const api = new VercelApi(vercelConfigOf(ctx.config), ctx.net);
  try {
    ctx.progress(0, 'listing projects');
    const { items: projects, truncated } = await listProjects(api, ctx.signal, MAX_PROJECTS);
    let nodes = 0;
    let relationships = 0;
    let deploymentCount = 0;
    for (const [index, project] of projects.entries()) {
      const { items: deployments } = await listDeployments(api, ctx.signal, { project: project.id }, DEPLOYMENTS_PER_PROJECT);
      const repoKey = repositoryKey(project);
      const batchNodes: GraphNodeInput[] = [
        {
          label: 'Project',
          properties: {
            _key: project.id,
            name: project.name,
            framework: project.framework ?? null,
            repository: project.link?.org && project.link.repo ? `${project.link.org}/${project.link.repo}` : null,
            production_branch: project.link?.productionBranch ?? null,
            updated_at: isoOf(project.updatedAt),
            system: 'vercel',
          },
        },
      ];
      const batchRelationships: GraphRelationshipInput[] = [];
      if (repoKey) batchRelationships.push({ type: 'DEPLOYS_FROM', from_label: 'Project', from_key: project.id, to_label: 'Repository', to_key: repoKey });
      for (const deployment of deployments) {
        const presented = presentDeployment(deployment);
        batchNodes.push({
          label: 'Deployment',
          properties: {
            _key: presented.id,
            project: presented.project,
            url: presented.url,
            state: presented.state,
            target: presented.target,
            created_at: presented.created_at,
            branch: presented.branch,
            commit_sha: presented.commit_sha,
            creator: presented.creator,
            system: 'vercel',
          },
        });
        batchRelationships.push({
          type: 'HAS_DEPLOYMENT',
          from_label: 'Project',
          from_key: project.id,
          to_label: 'Deployment',
          to_key: presented.id,
          properties: { production: presented.target === 'production' },
        });
      }
      await ctx.graph?.upsertNodes(batchNodes);
      await ctx.graph?.upsertRelationships(batchRelationships);
      nodes += batchNodes.length;
      relationships += batchRelationships.length;
      deploymentCount += deployments.length;
      ctx.progress((index + 1) / projects.length, `synced ${project.name}`);
    }
    if (projects.length === 0) ctx.progress(1, 'no projects');
    return { nodes, relationships, details: { projects: projects.length, deployments: deploymentCount, projects_truncated: truncated } };
  } catch (error) {
    ctx.signal.throwIfAborted();
    throw ToolError.is(error) ? new Error(`Vercel sync failed: ${error.message}`, { cause: error }) : error;
  }
}
