/**
 * POST /graph/import: a realm's initial load (or a merge) from NDJSON or
 * CSV, streamed; the Content-Type says which. The whole input is read and
 * checked into a private spool before anything is written; a bad line is a
 * 400 naming it. Then one bulk COPY transaction loads it (create, and merge
 * into empty tables), or merge into tables holding rows writes upserts in
 * batches. Formats: runtime/graph/import/records.ts.
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import type { ImportFormat } from '../../runtime/graph/import/records.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const FORMATS: Readonly<Record<string, ImportFormat>> = {
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'text/csv': 'csv',
};

const importQuery = z.object({
  realm: z.string().min(1).max(100).default(DEFAULT_REALM),
  mode: z.enum(['create', 'merge'], { message: 'mode is create or merge' }).default('create'),
});

export function graphImportRoutes({ graph, realms, config }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/graph/import',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:write',
      bodyKind: 'stream',
      maxBodyBytes: config.graphImportMaxBytes,
      summary:
        'Bulk-load nodes and relationships from NDJSON (application/x-ndjson) or CSV (text/csv), streamed: checked whole before anything is written; mode=create (default) refuses tables that hold rows (409), mode=merge upserts',
      query: importQuery,
      errors: [409, 415, 503],
      response: z.object({
        realm: z.string(),
        mode: z.enum(['create', 'merge']),
        nodes: z.number().int(),
        relationships: z.number().int(),
        method: z.enum(['copy', 'upsert']),
      }),
      handler: async ({ auth, query, request }) => {
        const mediaType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        const format = FORMATS[mediaType];
        if (!format) {
          throw new ServiceError('unsupported_media_type', `send NDJSON (application/x-ndjson) or CSV (text/csv), not "${mediaType.slice(0, 80)}"`, {
            accepted: Object.keys(FORMATS),
          });
        }
        if (!graph) throw new ServiceError('service_unavailable', 'no graph store is configured');
        // 404 for a realm the organization does not have
        await realms.get(auth.orgId, query.realm);
        const result = await graph.import(
          { orgId: auth.orgId, realm: query.realm },
          { body: request.bodyStream ?? [request.body], format, mode: query.mode, maxJsonDepth: config.maxJsonDepth },
        );
        return { status: 200, json: { realm: query.realm, mode: query.mode, ...result } };
      },
    }),
  ];
}
