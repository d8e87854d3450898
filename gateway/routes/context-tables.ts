/**
 * /context/tables: what ingest pipelines wrote, per realm. Rows come back
 * newest first, as JSON (`props` decoded) or, with
 * `Accept: application/vnd.apache.arrow.stream`, as an Arrow IPC stream
 * (pagination then travels in the `x-next-cursor` and `x-total-count` headers).
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { ARROW_STREAM_TYPE, rowsToArrowStream } from '../../ingest/arrow-stream.js';
import { decodeRowsCursor, encodeRowsCursor } from '../../ingest/table-rows.js';
import { decodeCursor, encodeCursor, pageQuery } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';

const tableSchema = z.object({
  realm: z.string(),
  name: z.string(),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  row_count: z.number().int(),
});

const TABLE_NAME = z.string().min(1).max(200);

export function contextTableRoutes({ contextTables }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/context/tables',
      tag: 'context',
      summary: 'Context tables per realm: columns with types, row counts',
      auth: 'bearer',
      permission: 'graph:read',
      query: z.object({ realm: REALM_NAME.optional() }),
      response: z.object({ items: z.array(tableSchema), next_cursor: z.null(), total: z.number().int() }),
      handler: async ({ auth, query }) => {
        const items = await contextTables.listTables(auth.orgId, query.realm ?? null);
        return { status: 200, json: { items, next_cursor: null, total: items.length } };
      },
    }),
    route({
      method: 'GET',
      path: '/context/tables/:table/rows',
      tag: 'context',
      summary: 'Rows of a context table, newest first (JSON, or Arrow IPC stream by Accept)',
      auth: 'bearer',
      permission: 'graph:read',
      params: z.object({ table: TABLE_NAME }),
      query: pageQuery.extend({ realm: REALM_NAME.default('default') }),
      response: z.object({ items: z.array(z.record(z.string(), z.unknown())), next_cursor: z.string().nullable(), total: z.number().int() }),
      handler: async ({ auth, params, query, request }) => {
        let after = null;
        if (query.cursor !== undefined) {
          after = decodeRowsCursor(decodeCursor(query, query.cursor));
          if (!after) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
        }
        const page = await contextTables.readRows(auth.orgId, query.realm, params.table, query.limit, after);
        if (!page) {
          throw new ServiceError('table_not_found', `table ${params.table} does not exist in realm ${query.realm}`, {
            table: params.table,
            realm: query.realm,
          });
        }
        const nextCursor = page.next === null ? null : encodeCursor(query, encodeRowsCursor(page.next));
        if ((request.headers['accept'] ?? '').includes(ARROW_STREAM_TYPE)) {
          const headers: Record<string, string> = { 'content-type': ARROW_STREAM_TYPE, 'x-total-count': String(page.total) };
          if (nextCursor !== null) headers['x-next-cursor'] = nextCursor;
          return { status: 200, headers, body: Buffer.from(rowsToArrowStream(page.columns, page.rows)) };
        }
        return { status: 200, json: { items: page.rows, next_cursor: nextCursor, total: page.total } };
      },
    }),
  ];
}
