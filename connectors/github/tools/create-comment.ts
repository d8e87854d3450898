/** github.create_comment (write): comments on an issue or pull request. */
import type { ConnectorTool } from '../../contract.js';
import { REPO_ARG, repoOf, withGithub } from './shared.js';

export const createCommentTool: ConnectorTool = {
  name: 'create_comment',
  effect: 'write',
  description:
    'Post a comment on a GitHub issue or pull request (they share numbering), e.g. a review reminder or a summary. Markdown is rendered. ' +
    'Returns the new comment id, url and creation time.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['repo', 'issue_number', 'body'],
    properties: {
      repo: REPO_ARG,
      issue_number: { type: 'integer', minimum: 1, description: 'the issue or pull request number' },
      body: { type: 'string', minLength: 1, maxLength: 65536, description: 'the comment text (Markdown)' },
    },
  },
  run: (args, ctx) =>
    withGithub(ctx, async (octokit, config) => {
      const { owner, repo } = repoOf(args, config);
      ctx.signal.throwIfAborted();
      const { data } = await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: args['issue_number'] as number,
        body: args['body'] as string,
        request: { signal: ctx.signal },
      });
      return { id: data.id, url: data.html_url, created_at: data.created_at };
    }),
};
