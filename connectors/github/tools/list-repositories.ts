/** github.list_repositories: the repositories this source covers. */
import type { ConnectorTool } from '../../contract.js';
import { listSourceRepositories } from '../repositories.js';
import { limitArg, withGithub } from './shared.js';

export const listRepositoriesTool: ConnectorTool = {
  name: 'list_repositories',
  effect: 'read',
  description:
    "List the GitHub repositories this source covers (its organizations' repositories and its single repositories; without either, those the credentials can reach). " +
    'Returns `items` with full name, owner, description, default branch, language, visibility, archived flag, last push time and url.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      org: { type: 'string', minLength: 1, description: "only this organization's repositories" },
      limit: limitArg(100, 1000),
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const org = args['org'] as string | undefined;
      const { repositories, truncated } = await listSourceRepositories(octokit, config, ctx.signal, args['limit'] as number, org);
      return {
        items: repositories.map((repo) => ({
          full_name: repo.full_name,
          owner: repo.owner.login,
          description: repo.description ?? null,
          default_branch: repo.default_branch ?? null,
          language: repo.language ?? null,
          private: repo.private,
          archived: repo.archived ?? false,
          pushed_at: repo.pushed_at ?? null,
          url: repo.html_url,
        })),
        truncated,
      };
    }),
};
