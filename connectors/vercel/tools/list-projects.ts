/** vercel.list_projects: the projects of the account or team. */
import type { ConnectorTool } from '../../contract.js';
import { isoOf } from '../config.js';
import { listProjects } from '../projects.js';
import { limitArg, withVercel } from './shared.js';

export const listProjectsTool: ConnectorTool = {
  name: 'list_projects',
  effect: 'read',
  description:
    'List the Vercel projects of the account or team, optionally searching by name. Returns `items` with id, name, framework, linked Git repository and production branch, and last update time.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100, description: 'only projects whose name contains this' },
      limit: limitArg(50, 1000),
    },
  },
  run: (args, ctx) =>
    withVercel(ctx, async (api) => {
      const { items, truncated } = await listProjects(api, ctx.signal, args['limit'] as number, args['search'] as string | undefined);
      return {
        items: items.map((project) => ({
          id: project.id,
          name: project.name,
          framework: project.framework ?? null,
          repository: project.link?.org && project.link.repo ? `${project.link.org}/${project.link.repo}` : null,
          git_provider: project.link?.type ?? null,
          production_branch: project.link?.productionBranch ?? null,
          updated_at: isoOf(project.updatedAt),
        })),
        truncated,
      };
    }),
};
