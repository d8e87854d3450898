/**
 * PostgreSQL for the shared SQL tools: a pg Pool per source (pinned to the
 * address the egress guard checked, TLS checked against the host name), and
 * every call inside `BEGIN READ ONLY` with `SET LOCAL statement_timeout`,
 * rolled back at the end. Driver errors become ToolErrors by SQLSTATE.
 */
import pg from 'pg';
import { ToolError, type ToolContext } from '../contract.js';
import { connectionOf, tlsOptionsOf, type SqlConnection, type SqlDialect } from '../shared/sql/config.js';
import type { QueryResult, SqlSession } from '../shared/sql/engine.js';
import { CONNECT_TIMEOUT_MS, pinnedAddress, POOL_IDLE_MS, POOL_MAX, SourcePools } from '../shared/sql/pools.js';
import { abortable } from '../shared/sql/plugin.js';
import { jsonRows, jsonValue } from '../shared/sql/values.js';
import { LimitedQuery, runLimited } from './limited-query.js';

export const POSTGRES: SqlDialect = {
  schemes: ['postgres', 'postgresql'],
  defaultPort: 5432,
  urlExample: 'postgres://reader:secret@db.internal:5432/orders?sslmode=require',
};

const APPLICATION_NAME = 'agent-context-service';

function clientConfig(connection: SqlConnection, address: string): pg.ClientConfig {
  const tls = tlsOptionsOf(connection);
  return {
    host: address,
    port: connection.port,
    user: connection.user,
    database: connection.database ?? connection.user,
    ...(connection.password === null ? {} : { password: connection.password }),
    ssl: tls ?? false,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: APPLICATION_NAME,
  };
}

/** the driver's failure as something the model (and the validation answer) can read */
function pgToolError(error: unknown, connection: SqlConnection): unknown {
  const found = ToolError.within(error);
  if (found !== null) return found;
  if (!(error instanceof Error) || error.name === 'AbortError') return error;
  const where = { host: connection.host, port: connection.port };
  if (error instanceof pg.DatabaseError) {
    const details = { sqlstate: error.code ?? null, ...(error.position === undefined ? {} : { position: Number(error.position) }) };
    switch (error.code) {
      case '28P01':
      case '28000':
        return new ToolError('unauthorized', `PostgreSQL refused the login: ${error.message}`, { ...details, ...where, user: connection.user });
      case '3D000':
        return new ToolError('database_not_found', error.message, { ...details, ...where });
      case '57014':
        return new ToolError(
          'statement_timeout',
          `the statement ran past the source's statement timeout (${connection.statementTimeoutMs} ms) and was cancelled by PostgreSQL: ${error.message}`,
          { ...details, timeout_ms: connection.statementTimeoutMs },
        );
      case '25006':
        return new ToolError('read_only_violation', `PostgreSQL refused a write: ${error.message} (this connector only reads)`, details);
      default:
        return new ToolError('query_failed', `PostgreSQL: ${error.message}`, details);
    }
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (/ssl|tls|certificate/i.test(error.message) || (typeof code === 'string' && /CERT|SSL|TLS/.test(code))) {
    return new ToolError('tls_failed', `TLS with ${connection.host} failed: ${error.message}`, { ...where, tls: connection.tls });
  }
  if ((typeof code === 'string' && /^E[A-Z]+$/.test(code)) || /timeout|terminated/i.test(error.message)) {
    return new ToolError('upstream_unreachable', `PostgreSQL at ${connection.host}:${connection.port} cannot be reached: ${error.message}`, {
      ...where,
      ...(code ? { code } : {}),
    });
  }
  return error;
}

async function typeNames(client: pg.ClientBase, oids: readonly number[]): Promise<Map<number, string>> {
  if (oids.length === 0) return new Map();
  const { rows } = await client.query<{ oid: number; name: string }>(
    'SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_type WHERE oid = ANY($1::oid[])',
    [[...new Set(oids)]],
  );
  return new Map(rows.map((row) => [row.oid, row.name]));
}

function sessionOf(client: pg.ClientBase, connection: SqlConnection): SqlSession {
  return {
    connection,
    rows: async (sql, params = []) => jsonRows((await client.query(sql, [...params])).rows as Record<string, unknown>[]),
    query: async (sql, params, limit): Promise<QueryResult> => {
      const result = await runLimited(client as pg.Client, new LimitedQuery(sql, params, limit + 1));
      const types = await typeNames(
        client,
        result.fields.map((field) => field.dataTypeID),
      );
      const rows = result.rows.slice(0, limit).map((row) => row.map(jsonValue));
      return {
        columns: result.fields.map((field) => ({ name: field.name, type: types.get(field.dataTypeID) ?? String(field.dataTypeID) })),
        rows,
        row_count: rows.length,
        truncated: result.suspended || result.rows.length > limit,
      };
    },
  };
}

export class PostgresSessions {
  private readonly pools = new SourcePools((connection, address) => {
    const pool = new pg.Pool({ ...clientConfig(connection, address), max: POOL_MAX, idleTimeoutMillis: POOL_IDLE_MS });
    // an idle connection the server ends (restart, admin kill) must not take the process down
    pool.on('error', () => undefined);
    return pool;
  });

  async readOnly<T>(ctx: Pick<ToolContext, 'sourceId' | 'config' | 'signal' | 'net'>, work: (session: SqlSession) => Promise<T>): Promise<T> {
    ctx.signal.throwIfAborted();
    const connection = connectionOf(ctx.config, POSTGRES);
    let client: pg.PoolClient | pg.Client | undefined;
    let pooled = false;
    let reusable = true;
    try {
      const address = await pinnedAddress(connection.host, ctx.net);
      if (ctx.sourceId === null) {
        client = new pg.Client(clientConfig(connection, address));
        client.on('error', () => undefined);
        await client.connect();
      } else {
        pooled = true;
        client = await this.pools.get(ctx.sourceId, connection, address).connect();
      }
      // connecting is bounded by CONNECT_TIMEOUT_MS, not the signal: a connection it abandoned would never go back to the pool
      ctx.signal.throwIfAborted();
      const open = client;
      return await abortable(
        (async () => {
          await open.query('BEGIN READ ONLY');
          // an integer from the validated config: SET takes no bound parameters
          await open.query(`SET LOCAL statement_timeout = ${Math.trunc(connection.statementTimeoutMs)}`);
          return work(sessionOf(open, connection));
        })(),
        ctx.signal,
      );
    } catch (error) {
      throw pgToolError(error, connection);
    } finally {
      // an aborted call may still have a statement in flight: the connection is dropped, not rolled back and reused
      if (client !== undefined && !ctx.signal.aborted)
        reusable = await client.query('ROLLBACK').then(
          () => true,
          () => false,
        );
      else reusable = false;
      if (pooled) (client as pg.PoolClient).release(!reusable);
      else if (client !== undefined) void client.end().catch(() => undefined);
    }
  }

  release(sourceId: string): Promise<void> {
    return this.pools.release(sourceId);
  }

  close(): Promise<void> {
    return this.pools.closeAll();
  }
}
