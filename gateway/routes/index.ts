/** The route table: every route module, in one list. */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { authRoutes } from './auth.js';
import { healthRoutes } from './health.js';
import { apiKeyRoutes } from './api-keys.js';
import { platformRoutes } from './platform.js';
import { agentRoutes } from './agents.js';
import { memoryRoutes } from './memory.js';
import { realmRoutes } from './realms.js';
import { settingsRoutes } from './settings.js';
import { skillRoutes } from './skills.js';
import { roleRoutes } from './roles.js';
import { userRoutes } from './users.js';
import { contextPipelineRoutes } from './context-pipelines.js';
import { contextIngestRoutes } from './context-ingest.js';
import { contextTableRoutes } from './context-tables.js';
import { chatRoutes } from './chat.js';
import { runtimeRoutes } from './runtime.js';

export function allRoutes(services: Services, table: () => readonly AnyRoute[]): AnyRoute[] {
  return [
    ...healthRoutes(services, table),
    ...authRoutes(services),
    ...realmRoutes(services),
    ...settingsRoutes(services),
    ...agentRoutes(services),
    ...skillRoutes(services),
    ...memoryRoutes(services),
    ...apiKeyRoutes(services),
    ...roleRoutes(services),
    ...userRoutes(services),
    ...platformRoutes(services),
    ...contextPipelineRoutes(services),
    ...contextIngestRoutes(services),
    ...contextTableRoutes(services),
    ...chatRoutes(services),
    ...runtimeRoutes(services),
  ];
}
