/** Builds the OpenAPI 3.1 document from the route table: the schemas that validate are the schemas documented. */
import { z } from 'zod';
import { ERROR_CATALOG } from '../runtime/errors.js';
import { API_PREFIX } from './pipeline.js';
import type { AnyRoute } from './route.js';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

const errorEnvelope: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
        message: { type: 'string' },
        details: { type: 'object' },
      },
    },
  },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'the body, query or a parameter is invalid',
  401: 'missing or invalid credentials',
  403: 'the caller lacks the permission',
  404: 'not found, in another organization, or the feature is off',
  409: 'conflict, or an Idempotency-Key reused or in progress',
  413: 'the body is over the route limit',
  415: 'a body in a content type the route does not read',
  422: 'the request is well-formed but cannot be carried out',
  429: 'over the rate; Retry-After says when to come back',
  503: 'a dependency is unavailable; retry with backoff',
};

/** The error statuses a route answers: implied by its definition, plus those it declares. */
function errorStatuses(route: AnyRoute): number[] {
  const statuses = new Set<number>(route.errors ?? []);
  const schemas: { params?: z.ZodType; query?: z.ZodType; body?: z.ZodType } = route;
  const readsBody = schemas.body !== undefined || route.bodyKind === 'raw' || route.bodyKind === 'stream';
  if (route.auth === 'bearer' || route.auth === 'worker') statuses.add(401);
  if (route.auth === 'bearer' && route.permission) statuses.add(403);
  if (schemas.params || route.feature) statuses.add(404);
  if (schemas.query || readsBody) statuses.add(400);
  if (route.creates) statuses.add(409);
  if (readsBody) statuses.add(413);
  return [...statuses].sort((a, b) => a - b);
}

const errorResponse = (status: number): JsonSchema => ({
  description: ERROR_DESCRIPTIONS[status] ?? 'error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function parameters(route: AnyRoute): JsonSchema[] {
  const out: JsonSchema[] = [];
  const schemas: { params?: z.ZodType; query?: z.ZodType } = route;
  for (const [where, schema] of [
    ['path', schemas.params],
    ['query', schemas.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: property });
    }
  }
  if (route.creates) {
    out.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
  }
  return out;
}

export function buildOpenApi(routes: readonly AnyRoute[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = API_PREFIX + route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const status = String(route.status ?? 200);
    const operation: JsonSchema = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[/:]+([a-z])/gi, (_m, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '')}`,
      summary: route.summary,
      tags: [route.tag],
      parameters: parameters(route),
      responses: {
        [status]: {
          description: 'success',
          ...(route.response && status !== '204' ? { content: { 'application/json': { schema: toSchema(route.response, 'output') } } } : {}),
        },
        ...Object.fromEntries(
          Object.entries(route.responses ?? {}).map(([other, schema]) => [
            other,
            {
              description: `status ${other}`,
              content: {
                'application/json': {
                  // an error status the route answers in its own form can still be the edge's envelope
                  schema: Number(other) >= 400 ? { anyOf: [toSchema(schema, 'output'), { $ref: '#/components/schemas/Error' }] } : toSchema(schema, 'output'),
                },
              },
            },
          ]),
        ),
        ...Object.fromEntries(
          errorStatuses(route)
            .filter((code) => !route.responses?.[code])
            .map((code) => [String(code), errorResponse(code)]),
        ),
        default: { ...errorResponse(500), description: 'any other error (500 internal_error included)' },
      },
      ...(route.auth === 'bearer' ? { security: [{ bearer: [] }] } : route.auth === 'worker' ? { security: [{ worker: [] }] } : { security: [] }),
      ...(route.auth === 'bearer' && route.permission ? { 'x-permission': route.permission } : {}),
      ...(route.feature ? { 'x-feature': route.feature } : {}),
    };
    const schemas: { body?: z.ZodType } = route;
    const body = schemas.body;
    if (body && (route.bodyKind ?? 'json') === 'json') {
      operation['requestBody'] = { required: true, content: { 'application/json': { schema: toSchema(body, 'input') } } };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Automation and context service', version: '1.0.0', license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorEnvelope },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'user JWT or API key' },
        worker: { type: 'http', scheme: 'bearer', description: 'WORKER_TOKEN: worker processes only' },
      },
    },
  };
}
