/**
 * The built-in `files` connector: lets an agent run leave files behind (a
 * report, a CSV, a chart) as its artifacts. They are stored in the
 * organization's file store under `artifacts/<run id>/`, listed with the
 * run (`GET /tasks/:id/runs`) and downloaded through `/files`.
 * Sourceless: the file store is the organization's own, no credentials needed.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import { listArtifactsTool } from './tools/list-artifacts.js';
import { writeArtifactTool } from './tools/write-artifact.js';

/** Its tools reach the file store through the `files` port. */
export function createFilesPlugin(): ConnectorPlugin {
  return {
    kind: 'files',
    version: '1.0.0',
    contract: '^1',
    description: "The run's artifacts: files an agent writes (reports, data, images) for people to download afterwards.",
    ...sourcelessParts('files'),
    // artifacts belong to a run: MCP clients, outside any, do not see these tools
    runOnly: true,
    requires: ['files'],
    tools: [writeArtifactTool(), listArtifactsTool()],
  };
}
