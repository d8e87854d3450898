/**
 * The built-in `vercel` connector (deployment platform): projects,
 * deployments, the latest production deployment, failed deployments with
 * their build logs, redeploy and rollback (writes). Vercel's REST API
 * (Bearer token, `teamId` on every call for a team) through the shared HTTP
 * client (429/5xx retries); `base_url` points it at a proxy or the tests'
 * fake. Sync writes projects, deployments and their Git repositories into the
 * context graph (model in sync.ts).
 */
import type { ConnectorPlugin } from '../contract.js';
import { VERCEL_CONFIG_SCHEMA } from './config.js';
import { syncVercel } from './sync.js';
import { buildLogsTool } from './tools/build-logs.js';
import { failedDeploymentsTool } from './tools/failed-deployments.js';
import { latestProductionDeploymentTool } from './tools/latest-production-deployment.js';
import { listDeploymentsTool } from './tools/list-deployments.js';
import { listProjectsTool } from './tools/list-projects.js';
import { redeployTool } from './tools/redeploy.js';
import { rollbackTool } from './tools/rollback.js';
import { validateVercel } from './validate.js';

export function createVercelPlugin(): ConnectorPlugin {
  return {
    kind: 'vercel',
    version: '1.0.0',
    contract: '^1',
    description: 'Vercel (deployment platform): projects, deployments, the production deployment, failed deployments with build logs, redeploy and rollback.',
    configSchema: VERCEL_CONFIG_SCHEMA,
    validate: validateVercel,
    tools: [listProjectsTool, listDeploymentsTool, latestProductionDeploymentTool, failedDeploymentsTool, buildLogsTool, redeployTool, rollbackTool],
    sync: syncVercel,
  };
}
