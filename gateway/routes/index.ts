/** The route table: every route module, in one list. */
import type { AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { authRoutes } from './auth.js';
import { healthRoutes } from './health.js';
import { realmRoutes } from './realms.js';

export function allRoutes(services: Services, table: () => readonly AnyRoute[]): AnyRoute[] {
  return [
    ...healthRoutes(services, table),
    ...authRoutes(services),
    ...realmRoutes(services),
  ];
}
