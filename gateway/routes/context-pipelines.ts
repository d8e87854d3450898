/**
 * /context/pipelines: ingest pipelines, their tokens (plaintext answered once,
 * stored as sha256; many per pipeline, each revocable) and their run history.
 */
import { z } from 'zod';
import type { ContextPipelineDoc, IngestTokenDoc } from '../../domains/ingest-pipelines/service.js';
import { ServiceError } from '../../runtime/errors.js';
import { TARGET_TABLES } from '../../ingest/table-catalog.js';
import { decodeCursor, encodeCursor, listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';
import { graphOutcomeSchema } from './context-ingest.js';
import { isValidProperty } from '../../runtime/graph/names.js';

const name = safeName(z.string().trim().min(1, { message: 'name is required' }).max(200, { message: 'name is at most 200 characters' }));
/** a graph property name (runtime/graph/names.ts) */
const keyField = z.string().refine(isValidProperty, { message: 'key_field is a property name: letters, digits and "_", at most 64' }).nullable();
const targetTable = z.enum(TARGET_TABLES, { message: `target_table is one of ${TARGET_TABLES.join(', ')}` });

const pipelineCreate = z.strictObject({
  name,
  kind: z.literal('webhook', { message: 'kind must be "webhook"' }).default('webhook'),
  target_table: targetTable,
  realm: REALM_NAME.default('default'),
  require_signature: z.boolean().default(false),
  key_field: keyField.default(null),
});
const pipelinePatch = z.strictObject({
  name: name.optional(),
  // accepted so that a change answers `immutable_field`
  kind: z.string().optional(),
  target_table: targetTable.optional(),
  realm: REALM_NAME.optional(),
  require_signature: z.boolean().optional(),
  key_field: keyField.optional(),
});

const pipelineSchema = z.object({
  ...storedSchema,
  name: z.string(),
  kind: z.literal('webhook'),
  target_table: z.enum(TARGET_TABLES),
  realm: z.string(),
  require_signature: z.boolean(),
  key_field: z.string().nullable(),
  created_by: z.string(),
  ingest_path: z.string(),
});

const present = (pipeline: ContextPipelineDoc) => ({
  id: pipeline.id,
  name: pipeline.name,
  kind: pipeline.kind,
  target_table: pipeline.target_table,
  realm: pipeline.realm,
  require_signature: pipeline.require_signature,
  key_field: pipeline.key_field ?? null,
  created_by: pipeline.created_by,
  /** where tokens are posted to, relative to /api/v1 */
  ingest_path: '/context/ingest/webhook/{token}',
  created_at: pipeline.created_at,
  updated_at: pipeline.updated_at,
});

const tokenCreate = z.strictObject({
  signing_secret: z
    .string()
    .min(16, { message: 'signing_secret is at least 16 characters' })
    .max(512, { message: 'signing_secret is at most 512 characters' })
    .optional(),
});

const tokenSchema = z.object({
  ...storedSchema,
  pipeline_id: z.string(),
  token_prefix: z.string(),
  active: z.boolean(),
  created_by: z.string(),
  revoked_at: z.string().nullable(),
});
const tokenCreated = tokenSchema.extend({ token: z.string(), signing_secret: z.string() });

/** Never the hash nor the signing secret. */
const presentToken = (token: IngestTokenDoc) => ({
  id: token.id,
  pipeline_id: token.pipeline_id,
  token_prefix: token.token_prefix,
  active: token.revoked_at === null,
  created_by: token.created_by,
  revoked_at: token.revoked_at,
  created_at: token.created_at,
  updated_at: token.updated_at,
});

const runSchema = z.object({
  run_id: z.number().int(),
  pipeline_id: z.string(),
  token_id: z.string().nullable(),
  realm: z.string(),
  target_table: z.string(),
  /** `pending`: a large body queued for a worker (feature workers), until its rows are written or it fails */
  status: z.enum(['succeeded', 'failed', 'pending']),
  rows_in: z.number().int(),
  rows_out: z.number().int(),
  error_code: z.string().nullable(),
  error: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  started_at: z.string(),
  /** null while pending */
  finished_at: z.string().nullable(),
  graph: z.union([graphOutcomeSchema, z.object({ status: z.literal('pending') })]).nullable(),
});

const tokenParams = z.object({ id: z.string().min(1).max(100), token_id: z.string().min(1).max(100) });

export function contextPipelineRoutes({ ingestPipelines: pipelines }: Services): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/context/pipelines',
      tag: 'context',
      summary: 'List ingest pipelines',
      auth: 'bearer',
      permission: 'pipeline:read',
      query: pageQuery,
      response: pageSchema(pipelineSchema),
      handler: async ({ auth, query }) => ({ status: 200, json: pageEnvelope(query, await pipelines.list(auth.orgId, listOptions(query)), present) }),
    }),
    route({
      method: 'POST',
      path: '/context/pipelines',
      tag: 'context',
      summary: 'Create an ingest pipeline',
      auth: 'bearer',
      permission: 'pipeline:manage',
      body: pipelineCreate,
      response: pipelineSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        const pipeline = await pipelines.create(auth.orgId, auth.userId, body);
        return { status: 201, json: present(pipeline) };
      },
    }),
    route({
      method: 'GET',
      path: '/context/pipelines/:id',
      tag: 'context',
      summary: 'Get an ingest pipeline',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      response: pipelineSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await pipelines.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/context/pipelines/:id',
      tag: 'context',
      summary: 'Update an ingest pipeline (kind is fixed)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      body: pipelinePatch,
      response: pipelineSchema,
      handler: async ({ auth, params, body }) => {
        return { status: 200, json: present(await pipelines.update(auth.orgId, params.id, body)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/context/pipelines/:id',
      tag: 'context',
      summary: 'Delete an ingest pipeline and its tokens (its tables and rows stay)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await pipelines.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/context/pipelines/:id/tokens',
      tag: 'context',
      summary: 'Create an ingest token (the token and signing secret are answered only now)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      body: tokenCreate.optional(),
      response: tokenCreated,
      status: 201,
      creates: true,
      handler: async ({ auth, params, body }) => {
        const { record, token, signing_secret } = await pipelines.issueToken(auth.orgId, params.id, auth.userId, body?.signing_secret);
        return { status: 201, json: { ...presentToken(record), token, signing_secret } };
      },
    }),
    route({
      method: 'GET',
      path: '/context/pipelines/:id/tokens',
      tag: 'context',
      summary: 'List the tokens of a pipeline (no plaintext)',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(tokenSchema),
      handler: async ({ auth, params, query }) => {
        return { status: 200, json: pageEnvelope(query, await pipelines.tokens(auth.orgId, params.id, listOptions(query)), presentToken) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/context/pipelines/:id/tokens/:token_id',
      tag: 'context',
      summary: 'Revoke one token (the others keep working)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: tokenParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await pipelines.revokeToken(auth.orgId, params.id, params.token_id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'GET',
      path: '/context/pipelines/:id/runs',
      tag: 'context',
      summary: 'Ingest runs of a pipeline, newest first',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(runSchema),
      handler: async ({ auth, params, query }) => {
        let before: number | null = null;
        if (query.cursor !== undefined) {
          before = Number(decodeCursor(query, query.cursor));
          if (!Number.isSafeInteger(before)) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
        }
        const page = await pipelines.runs(auth.orgId, params.id, query.limit, before);
        return {
          status: 200,
          json: {
            items: page.items.map((run) => (run.status === 'pending' ? { ...run, finished_at: null } : run)),
            next_cursor: page.nextAfter === null ? null : encodeCursor(query, String(page.nextAfter)),
            total: page.total,
          },
        };
      },
    }),
  ];
}
