import type { Logger } from 'pino';
import type { ContextTables } from '../ingest/context-tables.js';
import type { IdentityService } from '../runtime/auth/identity.js';
import type { Collections } from '../runtime/collections.js';
import type { ServiceConfig } from '../runtime/config.js';
import type { HealthReporter } from '../runtime/health.js';

/** What route modules are built from; assembled once in gateway/app.ts. */
export interface Services {
  readonly config: ServiceConfig;
  readonly collections: Collections;
  readonly identity: IdentityService;
  readonly health: HealthReporter;
  readonly logger: Logger;
  /** DuckDB context tables: ingest, runs, reads */
  readonly contextTables: ContextTables;
}
