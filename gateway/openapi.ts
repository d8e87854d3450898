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

function parameters(route: AnyRoute): JsonSchema[] {
  const out: JsonSchema[] = [];
  const schemas: { params?: z.ZodType; query?: z.ZodType } = route;
  for (const [where, schema] of [['path', schemas.params], ['query', schemas.query]] as const) {
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
          ...(route.response && status !== '204'
            ? { content: { 'application/json': { schema: toSchema(route.response, 'output') } } }
            : {}),
        },
        default: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      ...(route.auth === 'bearer' ? { security: [{ bearer: [] }] } : { security: [] }),
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
    info: { title: 'Automation and context service', version: '1.0.0' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorEnvelope },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'user JWT or API key' } },
    },
  };
}
