/** (being built) */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';

export function taskRoutes(_services: Services): AnyRoute[] {
  return [];
}
