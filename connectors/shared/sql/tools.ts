/**
 * The tools every SQL connector offers (all `read`): the definitions the
 * model sees are shared; what runs is the engine's (connectors/<kind>/tools/).
 */
import type { ConnectorTool } from '../../contract.js';
import type { SqlEngine } from './engine.js';

const sqlText = { type: 'string', minLength: 1, maxLength: 100_000, description: 'ONE SQL statement' };
const params = (engine: SqlEngine) => ({
  type: 'array',
  maxItems: 100,
  items: { type: ['string', 'number', 'boolean', 'null'] },
  default: [],
  description: `values for the ${engine.placeholder} placeholders, bound by the server (never spliced into the text)`,
});

function listSchemas(engine: SqlEngine): ConnectorTool {
  return {
    name: 'list_schemas',
    effect: 'read',
    description: `List the schemas (databases) of the ${engine.label} source with their tables and views and estimated row counts. Start here to find table names.`,
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    run: (_args, ctx) => engine.readOnly(ctx, (session) => engine.listSchemas(session)),
  };
}

function describeTable(engine: SqlEngine): ConnectorTool {
  return {
    name: 'describe_table',
    effect: 'read',
    description: `Describe one ${engine.label} table: columns (type, nullable, default), primary key, foreign keys (both ways) and indexes.`,
    input_schema: {
      type: 'object',
      properties: {
        table: { type: 'string', minLength: 1, maxLength: 128 },
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: 128,
          description: engine.kind === 'postgres' ? 'default `public`' : "default the source's database",
        },
      },
      required: ['table'],
      additionalProperties: false,
    },
    run: (args, ctx) =>
      engine.readOnly(ctx, (session) => engine.describeTable(session, (args['schema'] as string | undefined) ?? null, args['table'] as string)),
  };
}

function query(engine: SqlEngine): ConnectorTool {
  return {
    name: 'query',
    effect: 'read',
    description:
      `Run ONE read-only SQL statement on the ${engine.label} source and get {columns:[{name,type}], rows:[[...]], row_count, truncated}. ` +
      `It runs in a READ ONLY transaction (the database refuses writes) with the source's statement timeout and row limit. ` +
      `Pass values as \`params\` with ${engine.placeholder} placeholders; several statements at once are refused.`,
    input_schema: {
      type: 'object',
      properties: {
        sql: sqlText,
        params: params(engine),
        max_rows: { type: 'integer', minimum: 1, maximum: 10_000, description: "fewer rows than the source's row limit" },
      },
      required: ['sql'],
      additionalProperties: false,
    },
    run: (args, ctx) =>
      engine.readOnly(ctx, (session) => {
        const limit = Math.min(session.connection.rowLimit, (args['max_rows'] as number | undefined) ?? Number.MAX_SAFE_INTEGER);
        return session.query(args['sql'] as string, (args['params'] as unknown[] | undefined) ?? [], limit);
      }),
  };
}

function explain(engine: SqlEngine): ConnectorTool {
  return {
    name: 'explain',
    effect: 'read',
    description: `Show the ${engine.label} query plan of ONE statement (as JSON where the engine gives it) without running it: the access paths, indexes used and estimated rows.`,
    input_schema: { type: 'object', properties: { sql: sqlText, params: params(engine) }, required: ['sql'], additionalProperties: false },
    run: (args, ctx) => engine.readOnly(ctx, (session) => engine.explain(session, args['sql'] as string, (args['params'] as unknown[] | undefined) ?? [])),
  };
}

function slowQueries(engine: SqlEngine): ConnectorTool {
  return {
    name: 'slow_queries',
    effect: 'read',
    description:
      `What is slow on the ${engine.label} source: the statements with the most total time from the server's statement statistics ` +
      `(${engine.kind === 'postgres' ? 'pg_stat_statements' : 'performance_schema'}) when available (else \`statistics.available: false\` with the reason), ` +
      'and the statements running right now for longer than `min_duration_ms`.',
    input_schema: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        min_duration_ms: { type: 'integer', minimum: 0, maximum: 86_400_000, default: 1000, description: 'running statements shorter than this are left out' },
      },
      additionalProperties: false,
    },
    run: (args, ctx) => engine.readOnly(ctx, (session) => engine.slowQueries(session, args['limit'] as number, args['min_duration_ms'] as number)),
  };
}

function locks(engine: SqlEngine): ConnectorTool {
  return {
    name: 'locks',
    effect: 'read',
    description: `Who holds what on the ${engine.label} source: the lock waits (which session waits on which, for how long, running what) and the locks held.`,
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    run: (_args, ctx) => engine.readOnly(ctx, (session) => engine.locks(session)),
  };
}

function connections(engine: SqlEngine): ConnectorTool {
  return {
    name: 'connections',
    effect: 'read',
    description: `Who is connected to the ${engine.label} source: sessions by user, client address and state, with the statement each runs and for how long, and the connection limit.`,
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    run: (_args, ctx) => engine.readOnly(ctx, (session) => engine.connections(session)),
  };
}

export const sqlTools = (engine: SqlEngine): ConnectorTool[] =>
  [listSchemas, describeTable, query, explain, slowQueries, locks, connections].map((tool) => tool(engine));
