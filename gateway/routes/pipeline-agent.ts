/** (being built) */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';

export function pipelineAgentRoutes(_services: Services): AnyRoute[] {
  return [];
}
