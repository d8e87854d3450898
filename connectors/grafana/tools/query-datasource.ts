/** grafana.query_datasource: runs one query through Grafana (`POST /api/ds/query`) and returns its frames. */
import { ToolError, type ConnectorTool } from '../../contract.js';
import { grafanaClient } from '../client.js';

interface Frame {
  readonly schema?: { name?: string; fields?: { name: string; type?: string; labels?: Record<string, string> }[] };
  readonly data?: { values?: unknown[][] };
}

interface QueryAnswer {
  readonly results: Record<string, { status?: number; error?: string; frames?: Frame[] }>;
}

const MAX_POINTS = 200;

/** Grafana answers a query the data source refused with 400 and the error inside `results`; other failures stay as they are. */
function failedQuery(error: unknown): QueryAnswer {
  if (ToolError.is(error) && error.details?.['status'] === 400 && typeof error.details['body'] === 'string') {
    try {
      const answer = JSON.parse(error.details['body']) as Partial<QueryAnswer>;
      if (answer.results?.['A']?.error !== undefined) return answer as QueryAnswer;
    } catch {
      // not the results shape (or cut short): report the HTTP failure itself
    }
  }
  throw error;
}

export const queryDatasourceTool: ConnectorTool = {
  name: 'query_datasource',
  effect: 'read',
  description:
    'Run a query against a Grafana data source over a time range and get the resulting series: for Prometheus pass `{"expr": "..."}`, ' +
    'for Loki `{"expr": "{app=\\"api\\"}"}`, for SQL sources `{"rawSql": "...", "format": "table"}`. ' +
    `Returns frames (name, fields with labels, values; at most ${MAX_POINTS} rows each, newest kept).`,
  input_schema: {
    type: 'object',
    properties: {
      datasource_uid: { type: 'string', minLength: 1, maxLength: 40 },
      query: { type: 'object', description: 'the data-source-specific query model (expr, rawSql, ...)', minProperties: 1 },
      from: { type: 'string', default: 'now-1h', description: 'relative (`now-6h`) or epoch milliseconds' },
      to: { type: 'string', default: 'now' },
      max_data_points: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    },
    required: ['datasource_uid', 'query'],
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    ctx.signal.throwIfAborted();
    const body = {
      queries: [{ refId: 'A', datasource: { uid: args['datasource_uid'] }, maxDataPoints: args['max_data_points'], ...(args['query'] as object) }],
      from: args['from'],
      to: args['to'],
    };
    const { data } = await grafanaClient(ctx.config, ctx.net)
      .json<QueryAnswer>({ method: 'POST', path: '/api/ds/query', body, signal: ctx.signal })
      .catch((error: unknown) => ({ data: failedQuery(error) }));
    const result = data.results['A'];
    if (result?.error !== undefined)
      throw new ToolError('query_failed', `the data source refused the query: ${result.error}`, { status: result.status ?? null });
    return {
      frames: (result?.frames ?? []).map((frame) => {
        const values = frame.data?.values ?? [];
        const rows = values[0]?.length ?? 0;
        const keep = Math.max(0, rows - MAX_POINTS);
        return {
          name: frame.schema?.name ?? null,
          fields: (frame.schema?.fields ?? []).map((field, i) => ({
            name: field.name,
            type: field.type ?? null,
            labels: field.labels ?? {},
            values: (values[i] ?? []).slice(keep),
          })),
          truncated: keep > 0,
        };
      }),
    };
  },
};
