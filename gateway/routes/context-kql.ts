/**
 * POST /context/kql: Kusto Query Language over a realm's context tables (the
 * Advanced tier). JSON `{columns, rows, stats}`, or with
 * `Accept: application/vnd.apache.arrow.stream` an Arrow IPC stream (the
 * stats then travel in `x-row-count`, `x-truncated` and `x-chart`).
 */
import { z } from 'zod';
import { ARROW_STREAM_TYPE } from '../../ingest/arrow-stream.js';
import { kqlToArrowStream } from '../../ingest/kql/arrow.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';

const kqlBody = z.strictObject({
  query: z.string().trim().min(1, { message: 'query must not be empty' }).max(100_000),
  realm: REALM_NAME,
  limit: z.number().int().min(1).max(100_000).default(10_000).describe('most rows returned (stats.truncated tells when more matched)'),
  timeout_ms: z.number().int().min(1).max(300_000).default(30_000).describe('the query is interrupted after this long (422 query_timeout)'),
});

const kqlResponse = z.object({
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.array(z.unknown())),
  stats: z.object({ row_count: z.number().int(), truncated: z.boolean(), elapsed_ms: z.number(), chart: z.string().nullable() }),
});

export function contextKqlRoutes({ contextQuery }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/context/kql',
      tag: 'context',
      summary: "KQL over a realm's context tables (Advanced tier; JSON, or Arrow IPC stream by Accept)",
      auth: 'bearer',
      permission: 'graph:read',
      body: kqlBody,
      response: kqlResponse,
      handler: async ({ auth, body, request }) => {
        const result = await contextQuery.kql(auth.orgId, { query: body.query, realm: body.realm, limit: body.limit, timeoutMs: body.timeout_ms });
        if ((request.headers['accept'] ?? '').includes(ARROW_STREAM_TYPE)) {
          const headers: Record<string, string> = {
            'content-type': ARROW_STREAM_TYPE,
            'x-row-count': String(result.stats.row_count),
            'x-truncated': String(result.stats.truncated),
          };
          if (result.stats.chart) headers['x-chart'] = result.stats.chart;
          return { status: 200, headers, body: Buffer.from(kqlToArrowStream(result)) };
        }
        return { status: 200, json: { columns: result.columns, rows: result.rows, stats: result.stats } };
      },
    }),
  ];
}
