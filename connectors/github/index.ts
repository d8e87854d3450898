/**
 * The built-in `github` connector (code host): pull requests (stale ones),
 * commits and their authors, Actions workflow runs, issues, comments (write),
 * through GitHub REST with the official `@octokit/rest` client. `base_url`
 * points it at GitHub Enterprise (`https://HOST/api/v3`), a proxy or the
 * tests' fake. Auth: a personal access / OAuth token, or a GitHub App
 * installation. Sync writes repositories, owners, contributors and open pull
 * requests into the context graph (model in sync.ts). Its Markdown files feed
 * RAG collections (documents.ts).
 */
import type { ConnectorPlugin } from '../contract.js';
import { GITHUB_CONFIG_SCHEMA } from './config.js';
import { githubDocuments } from './documents.js';
import { syncGithub } from './sync.js';
import { commitAuthorsTool } from './tools/commit-authors.js';
import { createCommentTool } from './tools/create-comment.js';
import { listCommitsTool } from './tools/list-commits.js';
import { listIssuesTool } from './tools/list-issues.js';
import { listPullRequestsTool } from './tools/list-pull-requests.js';
import { listRepositoriesTool } from './tools/list-repositories.js';
import { listWorkflowRunsTool } from './tools/list-workflow-runs.js';
import { validateGithub } from './validate.js';

export { missingScopes } from './validate.js';

export function createGithubPlugin(): ConnectorPlugin {
  return {
    kind: 'github',
    version: '1.0.0',
    contract: '^1',
    description: 'GitHub (code host): repositories, pull requests (stale ones), commits and authors, Actions workflow runs, issues, and comments.',
    configSchema: GITHUB_CONFIG_SCHEMA,
    validate: validateGithub,
    tools: [listRepositoriesTool, listPullRequestsTool, listCommitsTool, commitAuthorsTool, listWorkflowRunsTool, listIssuesTool, createCommentTool],
    sync: syncGithub,
    documents: githubDocuments,
  };
}
