/**
 * The built-in `jenkins` connector (build server): jobs through folders,
 * recent and failed builds with their causes, console tails, the last healthy
 * build, and triggering builds (write, with the CSRF crumb). Jenkins' JSON API
 * (`/api/json?tree=...`, Basic auth with an API token) through the shared
 * HTTP client (429/5xx retries). Sync writes jobs, builds and who triggered
 * them into the context graph (model in sync.ts).
 */
import type { ConnectorPlugin } from '../contract.js';
import { JENKINS_CONFIG_SCHEMA } from './config.js';
import { syncJenkins } from './sync.js';
import { consoleTailTool } from './tools/console-tail.js';
import { lastHealthyBuildTool } from './tools/last-healthy-build.js';
import { listBuildsTool } from './tools/list-builds.js';
import { listJobsTool } from './tools/list-jobs.js';
import { triggerBuildTool } from './tools/trigger-build.js';
import { validateJenkins } from './validate.js';

export { jobPath } from './config.js';

export function createJenkinsPlugin(): ConnectorPlugin {
  return {
    kind: 'jenkins',
    version: '1.0.0',
    contract: '^1',
    description: 'Jenkins (build server): jobs and folders, recent and failed builds with causes, console output, last healthy build, and triggering builds.',
    configSchema: JENKINS_CONFIG_SCHEMA,
    validate: validateJenkins,
    tools: [listJobsTool, listBuildsTool, consoleTailTool, lastHealthyBuildTool, triggerBuildTool],
    sync: syncJenkins,
  };
}
