/** (being built) */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';

export function pipelineRoutes(_services: Services): AnyRoute[] {
  return [];
}
