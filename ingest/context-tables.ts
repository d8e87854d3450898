/**
 * The context tables store: the DuckDB engine, the table catalog, the spill
 * folder and the ingest writer behind one object, which gateway/app.ts opens
 * and closes and the context routes use.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../runtime/config.js';
import type { HealthReporter } from '../runtime/health.js';
import { ContextEngine } from './engine.js';
import { GraphLedger } from './graph-ledger.js';
import { IngestWriter } from './ingest-writer.js';
import { listRuns, type RunPage } from './ledger.js';
import { SpillFolder } from './spill.js';
import { listTables, schemaName, TableCatalog, type TableInfo } from './table-catalog.js';
import { readRows, type RowsCursor, type RowsPage } from './table-rows.js';
import { realmSources } from './kql/context-sources.js';
import { runKql, type KqlOptions, type KqlResult } from './kql/run.js';

export class ContextTables {
  readonly engine: ContextEngine;
  readonly writer: IngestWriter;
  /** what `context_nodes` batches owe the graph, and what it took of them */
  readonly graphLedger: GraphLedger;
  private readonly catalog = new TableCatalog();
  private readonly spill: SpillFolder;

  constructor(config: ServiceConfig, logger: Logger) {
    const log = logger.child({ component: 'context-tables' });
    this.spill = new SpillFolder(join(config.dataDir, 'ingest-spill'));
    this.engine = new ContextEngine({
      path: config.contextDbPath,
      logger: log,
      // only once DuckDB's file lock is ours is this the only process using the spill folder
      onOpen: () => {
        this.catalog.reset();
        this.spill.reset();
      },
    });
    this.graphLedger = new GraphLedger(this.engine);
    this.writer = new IngestWriter(this.engine, this.catalog, this.spill, log, config.maxJsonDepth);
  }

  /** Opens the engine (a refusal leaves it `down`, reported by /health) and registers its health probe. */
  async open(health: HealthReporter): Promise<void> {
    health.register('context_tables', { engine: 'duckdb', check: () => this.engine.check() });
    await this.engine.open();
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  listTables(orgId: string, realm: string | null): Promise<TableInfo[]> {
    return this.engine.use((connection) => listTables(connection, orgId, realm));
  }

  readRows(orgId: string, realm: string, table: string, limit: number, after: RowsCursor | null): Promise<RowsPage | null> {
    return this.engine.use((connection) => readRows(connection, schemaName(orgId, realm), table, limit, after));
  }

  /** A KQL query over one realm's tables (ingest/kql/). */
  queryKql(orgId: string, realm: string, query: string, options: KqlOptions): Promise<KqlResult> {
    return this.engine.use(async (connection) => runKql(connection, query, await realmSources(connection, orgId, realm, this.catalog), options));
  }

  listRuns(orgId: string, pipelineId: string, limit: number, before: number | null): Promise<RunPage> {
    return this.engine.use((connection) => listRuns(connection, orgId, pipelineId, limit, before));
  }
}
