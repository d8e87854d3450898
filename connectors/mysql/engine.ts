/**
 * MySQL and MariaDB for the shared SQL tools: a mysql2 pool per source whose
 * sockets go to the address the egress guard checked (the name stays the TLS
 * servername), `multipleStatements` off, statements run as server-side
 * prepared statements (parameters bound, never interpolated) inside
 * `START TRANSACTION READ ONLY` with the session read-only too, and the
 * statement timeout as MariaDB's `max_statement_time` or MySQL's
 * `max_execution_time` (which MySQL applies to SELECT only).
 */
import { connect as tcpConnect } from 'node:net';
import mysql from 'mysql2/promise';
import { ToolError, type ToolContext } from '../contract.js';
import { connectionOf, tlsOptionsOf, type SqlConnection, type SqlDialect } from '../shared/sql/config.js';
import type { SqlSession } from '../shared/sql/engine.js';
import { CONNECT_TIMEOUT_MS, pinnedAddress, POOL_IDLE_MS, POOL_MAX, SourcePools } from '../shared/sql/pools.js';
import { abortable } from '../shared/sql/plugin.js';
import { jsonRows } from '../shared/sql/values.js';
import { runLimited } from './limited-query.js';

export const MYSQL: SqlDialect = {
  schemes: ['mysql', 'mariadb'],
  defaultPort: 3306,
  urlExample: 'mysql://reader:secret@db.internal:3306/orders?ssl-mode=REQUIRED',
};

function connectionOptions(connection: SqlConnection, address: string): mysql.ConnectionOptions {
  const tls = tlsOptionsOf(connection);
  return {
    // the name, for TLS (servername and identity check); the socket itself goes to the checked address
    host: connection.host,
    port: connection.port,
    stream: () => tcpConnect({ host: address, port: connection.port }),
    user: connection.user,
    ...(connection.password === null ? {} : { password: connection.password }),
    ...(connection.database === null ? {} : { database: connection.database }),
    ...(tls === null
      ? {}
      : { ssl: { rejectUnauthorized: tls.rejectUnauthorized, verifyIdentity: tls.rejectUnauthorized, ...(tls.ca === undefined ? {} : { ca: tls.ca }) } }),
    connectTimeout: CONNECT_TIMEOUT_MS,
    multipleStatements: false,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    maxPreparedStatements: 32,
  };
}

const ERRNO = { accessDenied: 1045, badDb: 1049, readOnly: 1792, mariaTimeout: 1969, mysqlTimeout: 3024 } as const;

/** the driver's failure as something the model (and the validation answer) can read */
function mysqlToolError(error: unknown, connection: SqlConnection): unknown {
  const found = ToolError.within(error);
  if (found !== null) return found;
  if (!(error instanceof Error) || error.name === 'AbortError') return error;
  const where = { host: connection.host, port: connection.port };
  const failure = error as Error & { errno?: number; code?: string; sqlState?: string; sqlMessage?: string };
  if (typeof failure.sqlMessage === 'string') {
    const details = { errno: failure.errno ?? null, sqlstate: failure.sqlState ?? null, code: failure.code ?? null };
    switch (failure.errno) {
      case ERRNO.accessDenied:
        return new ToolError('unauthorized', `the server refused the login: ${failure.sqlMessage}`, { ...details, ...where, user: connection.user });
      case ERRNO.badDb:
        return new ToolError('database_not_found', failure.sqlMessage, { ...details, ...where });
      case ERRNO.readOnly:
        return new ToolError('read_only_violation', `the database refused a write: ${failure.sqlMessage} (this connector only reads)`, details);
      case ERRNO.mariaTimeout:
      case ERRNO.mysqlTimeout:
        return new ToolError(
          'statement_timeout',
          `the statement ran past the source's statement timeout (${connection.statementTimeoutMs} ms) and was stopped by the server: ${failure.sqlMessage}`,
          { ...details, timeout_ms: connection.statementTimeoutMs },
        );
      default:
        return new ToolError('query_failed', `${failure.sqlMessage}`, details);
    }
  }
  if (/ssl|tls|certificate/i.test(`${failure.code ?? ''} ${error.message}`)) {
    return new ToolError('tls_failed', `TLS with ${connection.host} failed: ${error.message}`, { ...where, tls: connection.tls });
  }
  if (typeof failure.code === 'string' && /^(E[A-Z]+|PROTOCOL_.*)$/.test(failure.code)) {
    return new ToolError('upstream_unreachable', `the database at ${connection.host}:${connection.port} cannot be reached: ${error.message}`, {
      ...where,
      code: failure.code,
    });
  }
  return error;
}

function sessionOf(conn: mysql.PoolConnection | mysql.Connection, connection: SqlConnection): SqlSession {
  return {
    connection,
    rows: async (sql, params = []) => {
      const [rows] = params.length === 0 ? await conn.query(sql) : await conn.execute(sql, [...params] as never[]);
      return jsonRows(Array.isArray(rows) ? (rows as Record<string, unknown>[]) : []);
    },
    query: (sql, params, limit) => runLimited(conn, sql, params, limit),
  };
}

/** `SET SESSION`: MariaDB counts seconds (fractions allowed), MySQL milliseconds */
const timeoutStatement = (version: string, ms: number): string =>
  /mariadb/i.test(version) ? `SET SESSION max_statement_time = ${(Math.trunc(ms) / 1000).toFixed(3)}` : `SET SESSION max_execution_time = ${Math.trunc(ms)}`;

export class MysqlSessions {
  private readonly pools = new SourcePools((connection, address) =>
    mysql.createPool({ ...connectionOptions(connection, address), connectionLimit: POOL_MAX, maxIdle: 0, idleTimeout: POOL_IDLE_MS, enableKeepAlive: true }),
  );

  async readOnly<T>(ctx: Pick<ToolContext, 'sourceId' | 'config' | 'signal' | 'net'>, work: (session: SqlSession) => Promise<T>): Promise<T> {
    ctx.signal.throwIfAborted();
    const connection = connectionOf(ctx.config, MYSQL);
    let conn: mysql.PoolConnection | mysql.Connection | undefined;
    let pooled = false;
    let reusable = true;
    try {
      const address = await pinnedAddress(connection.host, ctx.net);
      if (ctx.sourceId === null) conn = await mysql.createConnection(connectionOptions(connection, address));
      else {
        pooled = true;
        conn = await this.pools.get(ctx.sourceId, connection, address).getConnection();
      }
      ctx.signal.throwIfAborted();
      const open = conn;
      return await abortable(
        (async () => {
          const [[server]] = (await open.query('SELECT VERSION() AS version')) as unknown as [{ version: string }[]];
          // values from the validated config: SET takes no bound parameters
          await open.query(timeoutStatement(server?.version ?? '', connection.statementTimeoutMs));
          // the session too, so a statement that commits implicitly leaves no read-write transaction behind
          await open.query('SET SESSION TRANSACTION READ ONLY');
          await open.query('START TRANSACTION READ ONLY');
          return work(sessionOf(open, connection));
        })(),
        ctx.signal,
      );
    } catch (error) {
      throw mysqlToolError(error, connection);
    } finally {
      if (conn !== undefined && !ctx.signal.aborted)
        reusable = await conn.query('ROLLBACK').then(
          () => true,
          () => false,
        );
      else reusable = false;
      if (pooled && reusable) (conn as mysql.PoolConnection).release();
      else conn?.destroy();
    }
  }

  release(sourceId: string): Promise<void> {
    return this.pools.release(sourceId);
  }

  close(): Promise<void> {
    return this.pools.closeAll();
  }
}
