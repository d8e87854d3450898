/**
 * The built-in `postgres` connector (driver `pg`): schemas, tables, read-only
 * queries, plans, slow statements, locks and connections; sync writes the
 * schema (tables, columns, foreign keys) into the graph. Every statement runs
 * in a READ ONLY transaction, so the database itself refuses writes.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sqlEngine, type SqlEngine } from '../shared/sql/engine.js';
import { sqlPlugin } from '../shared/sql/plugin.js';
import { POSTGRES, PostgresSessions } from './engine.js';
import { connections } from './tools/connections.js';
import { describeTable } from './tools/describe-table.js';
import { explain } from './tools/explain.js';
import { listSchemas } from './tools/list-schemas.js';
import { locks } from './tools/locks.js';
import { outline } from './tools/outline.js';
import { slowQueries } from './tools/slow-queries.js';

function createPostgresEngine(): SqlEngine {
  return sqlEngine(new PostgresSessions(), {
    kind: 'postgres',
    label: 'PostgreSQL',
    placeholder: '$1, $2, …',
    serverFacts: async (session) => {
      const [facts] = await session.rows(
        "SELECT current_setting('server_version') AS server_version, current_setting('transaction_read_only') AS read_only, current_user AS user, current_database() AS database, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser",
      );
      return {
        server_version: String(facts?.['server_version']),
        read_only: facts?.['read_only'] === 'on',
        user: facts?.['user'],
        database: facts?.['database'],
        superuser: facts?.['superuser'] === true,
      };
    },
    listSchemas,
    describeTable,
    explain,
    slowQueries,
    locks,
    connections,
    outline,
  });
}

export function createPostgresPlugin(): ConnectorPlugin {
  return sqlPlugin(
    createPostgresEngine(),
    POSTGRES,
    'PostgreSQL database, read-only: schemas and tables, SQL queries in read-only transactions, query plans, slow statements, locks and connections.',
  );
}
