/** The mysql connector end to end against the machine's MariaDB (see sql-suite.ts), and the conformance kit. */
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { createMysqlPlugin } from '../../connectors/mysql/index.js';
import { createMysqlScratch, mysqlUnreachable } from './sql-scratch.js';
import { describeSqlConnector, sqlToolCalls, whenReachable } from './sql-suite.js';

whenReachable('mysql', await mysqlUnreachable(), 'runs against a real MySQL/MariaDB server', () => {
  describeConnectorConformance(createMysqlPlugin(), {
    validConfig: { host: '127.0.0.1', user: 'root', tls: 'disable' },
    invalidConfig: { url: 'mysql://root:wrong-password@127.0.0.1:3306/?ssl-mode=DISABLED' },
    sourceId: 'src_my_kit',
    toolCalls: sqlToolCalls(
      { tool: 'describe_table', args: { table: 'no_such_table', schema: 'mysql' }, expect: { error_code: 'not_found' } },
      { tool: 'query', args: { sql: 'SELECT ? + 1 AS two', params: [1] } },
    ),
  });

  describeSqlConnector({
    kind: 'mysql',
    unreachable: mysqlUnreachable,
    scratch: createMysqlScratch,
    sleep: (seconds) => `SELECT SLEEP(${seconds})`,
    param: () => '?',
    schemaOf: (db) => db.database,
    badLogin: (db) => ({ config: { password: 'not-the-password' }, reason: new RegExp(`Access denied for user '${db.readWrite.user}'`) }),
  });
});
