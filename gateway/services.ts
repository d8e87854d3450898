import type { Logger } from 'pino';
import type { ContextTables } from '../ingest/context-tables.js';
import type { IdentityService } from '../runtime/auth/identity.js';
import type { Collections } from '../runtime/collections.js';
import type { ServiceConfig } from '../runtime/config.js';
import type { HealthReporter } from '../runtime/health.js';
import type { AgentRuntime } from '../runtime/agent/agent-runtime.js';
import type { Supervisor } from '../runtime/supervisor.js';

/** What route modules are built from; assembled once in gateway/app.ts. */
export interface Services {
  readonly config: ServiceConfig;
  readonly collections: Collections;
  readonly identity: IdentityService;
  readonly health: HealthReporter;
  readonly logger: Logger;
  /** DuckDB context tables: ingest, runs, reads */
  readonly contextTables: ContextTables;
  /** supervises every actor (agent runs, later tasks, bindings, workers) */
  readonly supervisor: Supervisor;
  /** starts agent runs, follows their transcripts, answers approvals */
  readonly agentRuntime: AgentRuntime;
}
