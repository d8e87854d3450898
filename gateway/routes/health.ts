/** /health (public) and /openapi.json (generated from the route table). */
import { z } from 'zod';
import { buildOpenApi } from '../openapi.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const healthReport = z.object({
  status: z.enum(['ok', 'degraded', 'down']),
  features: z.record(z.string(), z.boolean()),
  dependencies: z.record(z.string(), z.string()),
  engines: z.record(z.string(), z.string()),
  /** present when the feature is on: the Rego engine and the active bundles' revision */
  policies: z.object({ status: z.literal('ok'), engine: z.literal('rego'), revision: z.number() }).optional(),
});

export function healthRoutes({ health, policyBundles }: Services, allRoutes: () => readonly AnyRoute[]): AnyRoute[] {
  let document: string | null = null;
  return [
    route({
      method: 'GET',
      path: '/health',
      tag: 'meta',
      auth: 'public',
      summary: 'Service and dependency health',
      response: healthReport,
      // the same report when the metadata store is down
      responses: { 503: healthReport },
      handler: async () => {
        const report = await health.report();
        const policies = report.features.policies ? { policies: { status: 'ok', engine: 'rego', revision: policyBundles.generation } } : {};
        // 503 only when the metadata store is down: load balancers should keep a degraded server
        return { status: report.status === 'down' ? 503 : 200, json: { ...report, ...policies } };
      },
    }),
    route({
      method: 'GET',
      path: '/openapi.json',
      tag: 'meta',
      auth: 'public',
      summary: 'This API as an OpenAPI 3.1 document',
      response: z.looseObject({
        openapi: z.string(),
        info: z.looseObject({ title: z.string(), version: z.string() }),
        paths: z.record(z.string(), z.record(z.string(), z.unknown())),
        components: z.record(z.string(), z.unknown()),
      }),
      handler: async () => {
        document ??= JSON.stringify(buildOpenApi(allRoutes()));
        return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: document };
      },
    }),
  ];
}
