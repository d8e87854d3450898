/** The route table: every route module, in one list. */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { authRoutes } from './auth.js';
import { healthRoutes } from './health.js';
import { apiKeyRoutes } from './api-keys.js';
import { platformRoutes } from './platform.js';
import { agentRoutes } from './agents.js';
import { memoryRoutes } from './memory.js';
import { ragRoutes } from './rag.js';
import { realmRoutes } from './realms.js';
import { settingsRoutes } from './settings.js';
import { skillRoutes } from './skills.js';
import { roleRoutes } from './roles.js';
import { userRoutes } from './users.js';
import { contextPipelineRoutes } from './context-pipelines.js';
import { contextIngestRoutes } from './context-ingest.js';
import { contextTableRoutes } from './context-tables.js';
import { contextKqlRoutes } from './context-kql.js';
import { chatRoutes } from './chat.js';
import { chatToolCallRoutes } from './chat-tool-calls.js';
import { runtimeRoutes } from './runtime.js';
import { taskRoutes } from './tasks.js';
import { hookRoutes } from './hooks.js';
import { webhookRoutes } from './webhooks.js';
import { webhookSampleRoutes } from './webhook-samples.js';
import { taskRecommendationRoutes } from './task-recommendations.js';
import { sourceRoutes } from './sources.js';
import { mcpRoutes } from './mcp.js';
import { graphRoutes } from './graph.js';
import { graphMaintenanceRoutes } from './graph-maintenance.js';
import { graphImportRoutes } from './graph-import.js';
import { fileRoutes } from './files.js';
import { artifactRoutes } from './artifacts.js';
import { pipelineRoutes } from './pipelines.js';
import { pipelineAgentRoutes } from './pipeline-agent.js';
import { channelRoutes } from './channels.js';
import { bindingRoutes } from './bindings.js';
import { chatIncomingRoutes } from './chat-incoming.js';
import { policyRoutes } from './policies.js';
import { policySourceRoutes } from './policy-sources.js';
import { policyCheckRoutes } from './policy-checks.js';
import { activityRoutes } from './activity.js';
import { notificationRoutes } from './notifications.js';
import { gatewayRoutes } from './gateways.js';
import { orchestratorRoutes } from './orchestrator.js';
import { cliRoutes } from './cli.js';
import { workerRoutes } from './workers.js';
import { mediaRoutes } from './media.js';
import { voiceRoutes } from './voice.js';
import { ragWorkerRoutes } from './rag-workers.js';

export function allRoutes(services: Services, table: () => readonly AnyRoute[]): AnyRoute[] {
  return [
    ...healthRoutes(services, table),
    ...authRoutes(services),
    ...realmRoutes(services),
    ...settingsRoutes(services),
    ...agentRoutes(services),
    ...skillRoutes(services),
    ...memoryRoutes(services),
    ...ragRoutes(services),
    ...apiKeyRoutes(services),
    ...roleRoutes(services),
    ...userRoutes(services),
    ...platformRoutes(services),
    ...contextPipelineRoutes(services),
    ...contextIngestRoutes(services),
    ...contextTableRoutes(services),
    ...contextKqlRoutes(services),
    ...chatRoutes(services),
    ...chatToolCallRoutes(services),
    ...runtimeRoutes(services),
    ...taskRoutes(services),
    ...hookRoutes(services),
    ...webhookRoutes(services),
    ...webhookSampleRoutes(services),
    ...taskRecommendationRoutes(services),
    ...sourceRoutes(services),
    ...mcpRoutes(services),
    ...graphRoutes(services),
    ...graphMaintenanceRoutes(services),
    ...graphImportRoutes(services),
    ...fileRoutes(services),
    ...artifactRoutes(services),
    ...pipelineRoutes(services),
    ...pipelineAgentRoutes(services),
    ...channelRoutes(services),
    ...bindingRoutes(services),
    ...chatIncomingRoutes(services),
    ...policyRoutes(services),
    ...policySourceRoutes(services),
    ...policyCheckRoutes(services),
    ...activityRoutes(services),
    ...notificationRoutes(services),
    ...gatewayRoutes(services),
    ...orchestratorRoutes(services),
    ...workerRoutes(services),
    ...cliRoutes(services),
    ...mediaRoutes(services),
    ...voiceRoutes(services),
    ...ragWorkerRoutes(services),
  ];
}
