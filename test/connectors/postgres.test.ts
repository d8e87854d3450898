/** The postgres connector end to end against the machine's PostgreSQL (see sql-suite.ts), and the conformance kit. */
import { describeConnectorConformance } from '../../connectors/conformance/index.js';
import { createPostgresPlugin } from '../../connectors/postgres/index.js';
import { createPostgresScratch, postgresUnreachable } from './sql-scratch.js';
import { describeSqlConnector, sqlToolCalls, whenReachable } from './sql-suite.js';

whenReachable('postgres', await postgresUnreachable(), 'runs against a real PostgreSQL server', () => {
  describeConnectorConformance(createPostgresPlugin(), {
    validConfig: { host: '127.0.0.1', user: 'postgres', database: 'postgres', tls: 'disable' },
    // 127.0.0.1 trusts every login by password, so the refused login is a role that does not exist
    invalidConfig: { url: 'postgres://no_such_role_kit@127.0.0.1:5432/postgres?sslmode=disable' },
    sourceId: 'src_pg_kit',
    toolCalls: sqlToolCalls(
      { tool: 'describe_table', args: { table: 'no_such_table' }, expect: { error_code: 'not_found' } },
      {
        tool: 'query',
        args: { sql: 'SELECT $1::int + 1 AS two', params: [1] },
        expect: { result: { columns: [{ name: 'two', type: 'integer' }], rows: [[2]], row_count: 1, truncated: false } },
      },
    ),
  });

  describeSqlConnector({
    kind: 'postgres',
    unreachable: postgresUnreachable,
    scratch: createPostgresScratch,
    sleep: (seconds) => `SELECT pg_sleep(${seconds})`,
    param: (n) => `$${n}`,
    schemaOf: () => 'public',
    // the server trusts 127.0.0.1 (no password is checked there): a login role that does not exist is refused
    badLogin: (db) => ({ config: { user: `${db.readOnly.user}_missing` }, reason: /role .* does not exist/ }),
  });
});
