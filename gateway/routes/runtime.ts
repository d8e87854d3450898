/**
 * /runtime/actors: the supervisor's registry, for operators (owner and admin:
 * `runtime:read`). Lists the live actors working for the caller's
 * organization: id, kind, state, start time, parent, restarts.
 */
import { z } from 'zod';
import { pageQuery, pageSchema, decodeCursor, encodeCursor } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const actorSchema = z.object({
  id: z.string(),
  kind: z.string(),
  state: z.string(),
  status: z.enum(['running', 'stopping']),
  started_at: z.string(),
  parent: z.string().nullable(),
  restarts: z.number().int(),
});

const actorsQuery = pageQuery.extend({ kind: z.string().min(1).max(100).optional() });

export function runtimeRoutes({ supervisor }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/runtime/actors',
      tag: 'runtime',
      summary: 'Live actors of the organization (the supervisor registry)',
      auth: 'bearer',
      permission: 'runtime:read',
      query: actorsQuery,
      response: pageSchema(actorSchema),
      handler: async ({ auth, query }) => {
        const all = supervisor.list({ orgId: auth.orgId, ...(query.kind === undefined ? {} : { kind: query.kind }) });
        const after = query.cursor === undefined ? null : decodeCursor(query, query.cursor);
        const rest = after === null ? all : all.filter((actor) => actor.id > after);
        const page = rest.slice(0, query.limit);
        const last = page[page.length - 1];
        return {
          status: 200,
          json: {
            items: page.map(({ org_id: _org, ...actor }) => actor),
            next_cursor: rest.length > query.limit && last ? encodeCursor(query, last.id) : null,
            total: all.length,
          },
        };
      },
    }),
  ];
}
