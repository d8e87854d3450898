/**
 * The built-in connector plugins, in load order. A built-in gets what it
 * needs from the service exactly as a third-party plugin does: through the
 * ports it declares (`requires`), which the service offers to the loader.
 */
import type { ConnectorPlugin, ConnectorPluginFactory, PortOffers } from './contract.js';
import { createMemoryPlugin } from './memory/index.js';
import { createGraphPlugin } from './graph/index.js';
import { createMcpPlugin } from './mcp/index.js';
import { createWebhooksPlugin } from './webhooks/index.js';
import { createFilesPlugin } from './files/index.js';
import { createSlackPlugin } from './slack/index.js';
import { createGithubPlugin } from './github/index.js';
import { createJenkinsPlugin } from './jenkins/index.js';
import { createVercelPlugin } from './vercel/index.js';
import { createKubernetesPlugin } from './kubernetes/index.js';
import { createGrafanaPlugin } from './grafana/index.js';
import { createRunwayPlugin } from './runway/index.js';
import { createAwsPlugin } from './aws/index.js';
import { createPostgresPlugin } from './postgres/index.js';
import { createMysqlPlugin } from './mysql/index.js';
import { createRagPlugin } from './rag/index.js';

export interface BuiltinDependencies {
  /** the ports the service offers (pass the same to loadPlugins); the `graph` tools are left out when it offers no graph */
  readonly ports: PortOffers;
  /** MCP_STDIO_COMMANDS: what an `mcp` source may start over stdio (default none) */
  readonly mcpStdioCommands?: readonly string[];
  /** KUBERNETES_IN_CLUSTER: whether kubernetes sources may use this service's own service account (default no) */
  readonly kubernetesInCluster?: boolean;
}

export function builtinPlugins(deps: BuiltinDependencies): (ConnectorPlugin | ConnectorPluginFactory)[] {
  return [
    createMemoryPlugin(),
    createSlackPlugin(),
    createWebhooksPlugin(),
    createFilesPlugin(),
    createMcpPlugin({ stdioCommands: deps.mcpStdioCommands ?? [] }),
    createGithubPlugin(),
    createJenkinsPlugin(),
    createVercelPlugin(),
    createKubernetesPlugin({ allowInCluster: deps.kubernetesInCluster ?? false }),
    createGrafanaPlugin(),
    createRunwayPlugin(),
    createAwsPlugin(),
    createPostgresPlugin(),
    createMysqlPlugin(),
    ...(deps.ports.graph ? [createGraphPlugin()] : []),
    ...(deps.ports.rag ? [createRagPlugin()] : []),
  ];
}
