/**
 * The built-in `mysql` connector (driver `mysql2`, MySQL and MariaDB):
 * schemas, tables, read-only queries, plans, slow statements, locks and
 * connections; sync writes the schema (tables, columns, foreign keys) into
 * the graph. Every statement runs in a READ ONLY transaction, so the
 * database itself refuses writes.
 */
import type { ConnectorPlugin } from '../contract.js';
import { sqlEngine, type SqlEngine } from '../shared/sql/engine.js';
import { sqlPlugin } from '../shared/sql/plugin.js';
import { MYSQL, MysqlSessions } from './engine.js';
import { connections } from './tools/connections.js';
import { describeTable } from './tools/describe-table.js';
import { explain } from './tools/explain.js';
import { listSchemas } from './tools/list-schemas.js';
import { locks } from './tools/locks.js';
import { outline } from './tools/outline.js';
import { slowQueries } from './tools/slow-queries.js';

function createMysqlEngine(): SqlEngine {
  return sqlEngine(new MysqlSessions(), {
    kind: 'mysql',
    label: 'MySQL/MariaDB',
    placeholder: '?',
    serverFacts: async (session) => {
      const [facts] = await session.rows('SELECT VERSION() AS server_version, CURRENT_USER() AS user, DATABASE() AS `database`');
      const version = String(facts?.['server_version']);
      const mariadb = /mariadb/i.test(version);
      // MariaDB (to 11.0) names the access mode tx_read_only; MySQL 8 only transaction_read_only
      const [mode] = await session.rows(`SELECT @@session.${mariadb ? 'tx_read_only' : 'transaction_read_only'} AS read_only`);
      return {
        server_version: version,
        flavor: mariadb ? 'mariadb' : 'mysql',
        read_only: Number(mode?.['read_only']) === 1,
        user: facts?.['user'],
        database: facts?.['database'] ?? null,
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

export function createMysqlPlugin(): ConnectorPlugin {
  return sqlPlugin(
    createMysqlEngine(),
    MYSQL,
    'MySQL or MariaDB database, read-only: schemas and tables, SQL queries in read-only transactions, query plans, slow statements, locks and connections.',
  );
}
