/**
 * The built-in connector plugins, in load order. Each built-in gets what it
 * needs from the service here (third-party plugins only ever get ToolContext).
 */
import type { Collections } from '../runtime/collections.js';
import type { ConnectorPlugin, ConnectorPluginFactory } from './contract.js';
import { createMemoryPlugin } from './memory/index.js';
import { createGraphPlugin } from './graph/index.js';
import type { GraphStore } from '../runtime/graph/store.js';
import { createMcpPlugin } from './mcp/index.js';
import { createWebhooksPlugin } from './webhooks/index.js';
import { createFilesPlugin } from './files/index.js';
import type { FileStore } from '../runtime/files/store.js';
import type { OutboundWebhooks } from '../runtime/webhooks/outbound-webhooks.js';
import { createSlackPlugin } from './slack/index.js';
import { createGithubPlugin } from './github/index.js';
import { createJenkinsPlugin } from './jenkins/index.js';
import { createVercelPlugin } from './vercel/index.js';
import { createKubernetesPlugin } from './kubernetes/index.js';
import { createGrafanaPlugin } from './grafana/index.js';
import { createRunwayPlugin } from './runway/index.js';
import { createPostgresPlugin } from './postgres/index.js';
import { createMysqlPlugin } from './mysql/index.js';

export interface BuiltinDependencies {
  readonly collections: Collections;
  /** the context graph (the `graph` tools are left out when none is configured) */
  readonly graph?: GraphStore | null;
  /** outbound webhooks, for `webhooks.send` */
  readonly webhooks: OutboundWebhooks;
  /** the organization file store, where `files.write_artifact` keeps run artifacts */
  readonly files: FileStore;
  /** MCP_STDIO_COMMANDS: what an `mcp` source may start over stdio (default none) */
  readonly mcpStdioCommands?: readonly string[];
  /** KUBERNETES_IN_CLUSTER: whether kubernetes sources may use this service's own service account (default no) */
  readonly kubernetesInCluster?: boolean;
}

export function builtinPlugins(deps: BuiltinDependencies): (ConnectorPlugin | ConnectorPluginFactory)[] {
  return [createMemoryPlugin(deps.collections), createSlackPlugin(), createWebhooksPlugin(deps.webhooks), createFilesPlugin(deps.files),
    createMcpPlugin({ stdioCommands: deps.mcpStdioCommands ?? [] }),
    createGithubPlugin(), createJenkinsPlugin(), createVercelPlugin(), createKubernetesPlugin({ allowInCluster: deps.kubernetesInCluster ?? false }), createGrafanaPlugin(), createRunwayPlugin(),
    createPostgresPlugin(), createMysqlPlugin(),
    ...(deps.graph ? [createGraphPlugin(deps.graph)] : [])];
}
