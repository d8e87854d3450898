/**
 * /context/pipelines: ingest pipelines, their tokens (plaintext answered once,
 * stored as sha256; many per pipeline, each revocable) and their run history.
 */
import { z } from 'zod';
import type { ContextPipelineDoc, IngestTokenDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId, nowIso } from '../../runtime/ids.js';
import type { OrgId } from '../../runtime/store/types.js';
import { TARGET_TABLES } from '../../ingest/table-catalog.js';
import { newIngestToken, newSigningSecret, SigningSecrets } from '../../ingest/tokens.js';
import { decodeCursor, encodeCursor, listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';

const name = safeName(z.string().trim().min(1, { message: 'name is required' }).max(200, { message: 'name is at most 200 characters' }));
const targetTable = z.enum(TARGET_TABLES, { message: `target_table is one of ${TARGET_TABLES.join(', ')}` });

const pipelineCreate = z.strictObject({
  name,
  kind: z.literal('webhook', { message: 'kind must be "webhook"' }).default('webhook'),
  target_table: targetTable,
  realm: REALM_NAME.default('default'),
  require_signature: z.boolean().default(false),
});
const pipelinePatch = z.strictObject({
  name: name.optional(),
  // accepted so that a change answers `immutable_field`
  kind: z.string().optional(),
  target_table: targetTable.optional(),
  realm: REALM_NAME.optional(),
  require_signature: z.boolean().optional(),
});

const pipelineSchema = z.object({
  ...storedSchema,
  name: z.string(),
  kind: z.literal('webhook'),
  target_table: z.enum(TARGET_TABLES),
  realm: z.string(),
  require_signature: z.boolean(),
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
  status: z.enum(['succeeded', 'failed']),
  rows_in: z.number().int(),
  rows_out: z.number().int(),
  error_code: z.string().nullable(),
  error: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string(),
});

const tokenParams = z.object({ id: z.string().min(1).max(100), token_id: z.string().min(1).max(100) });

export function contextPipelineRoutes({ collections, config, contextTables }: Services): AnyRoute[] {
  const { contextPipelines: pipelines, ingestTokens: tokens, realms } = collections;
  const signingSecrets = new SigningSecrets(config.auth.jwtSecret);

  const requireRealm = async (org: OrgId, realm: string): Promise<void> => {
    if (!(await realms.findOne(org, { name: realm }))) {
      throw new ServiceError('validation_error', `invalid body: realm "${realm}" does not exist in this organization`, {
        issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
      });
    }
  };

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
        await requireRealm(auth.orgId, body.realm);
        const pipeline = await unique('pipeline', () =>
          pipelines.insert(auth.orgId, {
            name: body.name,
            kind: body.kind,
            target_table: body.target_table,
            realm: body.realm,
            require_signature: body.require_signature,
            created_by: auth.userId,
          }),
        );
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
      handler: async ({ auth, params }) => ({ status: 200, json: present(await getOr404(pipelines, auth.orgId, params.id, 'pipeline')) }),
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        rejectImmutable(pipeline, body, ['kind']);
        if (body.realm !== undefined) await requireRealm(auth.orgId, body.realm);
        const { kind: _kind, ...patch } = body;
        const updated = await unique('pipeline', () => pipelines.update(auth.orgId, pipeline.id, patch));
        if (!updated) throw new ServiceError('not_found', `pipeline ${params.id} not found`);
        return { status: 200, json: present(updated) };
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        await tokens.deleteWhere(auth.orgId, { pipeline_id: pipeline.id });
        await pipelines.delete(auth.orgId, pipeline.id);
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        const fresh = newIngestToken();
        const signingSecret = body?.signing_secret ?? newSigningSecret();
        const id = newId('itk');
        const record = await tokens.insert(auth.orgId, {
          id,
          pipeline_id: pipeline.id,
          token_hash: fresh.hash,
          token_prefix: fresh.prefix,
          signing_secret_sealed: signingSecrets.seal({ org_id: auth.orgId, pipeline_id: pipeline.id, id }, signingSecret),
          created_by: auth.userId,
          revoked_at: null,
        });
        return { status: 201, json: { ...presentToken(record), token: fresh.token, signing_secret: signingSecret } };
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        return { status: 200, json: pageEnvelope(query, await tokens.list(auth.orgId, listOptions(query, { pipeline_id: pipeline.id })), presentToken) };
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        const token = await tokens.get(auth.orgId, params.token_id);
        if (!token || token.pipeline_id !== pipeline.id) throw new ServiceError('not_found', `token ${params.token_id} not found`);
        if (token.revoked_at === null) await tokens.update(auth.orgId, token.id, { revoked_at: nowIso() });
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
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        let before: number | null = null;
        if (query.cursor !== undefined) {
          before = Number(decodeCursor(query, query.cursor));
          if (!Number.isSafeInteger(before)) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
        }
        const page = await contextTables.listRuns(auth.orgId, pipeline.id, query.limit, before);
        return {
          status: 200,
          json: { items: page.items, next_cursor: page.nextAfter === null ? null : encodeCursor(query, String(page.nextAfter)), total: page.total },
        };
      },
    }),
  ];
}
