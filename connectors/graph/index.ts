/**
 * The built-in `graph` connector: read tools over the context graph the
 * connectors' syncs fill (services, repositories, deployments, owners and how
 * they depend on each other). Sourceless: the tools are in every run, scoped
 * to the run's organization and realm.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sourcelessParts } from '../shared/sourceless.js';
import { cypherTool } from './tools/cypher.js';
import { expandTool } from './tools/expand.js';
import { getTool } from './tools/get.js';
import { searchTool } from './tools/search.js';

/** Its tools reach the graph through the `graph` port (the service leaves the plugin out when no graph store is configured). */
export function createGraphPlugin(): ConnectorPlugin {
  return {
    kind: 'graph',
    version: '1.0.0',
    contract: '^1',
    description: "The organization's context graph: nodes (Label:key) such as services, repositories and teams, and the relationships between them.",
    ...sourcelessParts('graph'),
    requires: ['graph'],
    tools: [searchTool(), getTool(), expandTool(), cypherTool()],
  };
}
