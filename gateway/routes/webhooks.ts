/** (being built) */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';

export function webhookRoutes(_services: Services): AnyRoute[] {
  return [];
}
