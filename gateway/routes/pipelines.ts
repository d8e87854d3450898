/**
 * /pipelines: pipeline definitions and their runs. Starting a run answers the
 * run and, once, a pipeline-scoped token for the executor's SERVICE_TOKEN;
 * what the executor reports through /pipeline-agent shows up in the run.
 */
import { z } from 'zod';
import type { PipelineDoc, PipelineRunDoc, PipelineRunEntryDoc } from '../../domains/pipelines/documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { createPageResponder, decimalInteger, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404, stripUndefined, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';

const NAME = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: 'name uses letters, digits, ".", "-" and "_"' });
const definition = z.record(z.string(), z.unknown());
/** 6 hours by default; a week at most */
const DEFAULT_TOKEN_TTL_SECONDS = 21_600;

const pipelineCreate = z.strictObject({
  name: NAME,
  description: z.string().max(2000).nullish(),
  realm: REALM_NAME.default('default'),
  definition: definition.default({}),
});
const pipelinePatch = z.strictObject({
  name: NAME.optional(),
  description: z.string().max(2000).nullable().optional(),
  realm: REALM_NAME.optional(),
  definition: definition.optional(),
});
const runStart = z.strictObject({
  parameters: z.record(z.string(), z.unknown()).default({}),
  token_ttl_seconds: z.number().int().min(60).max(604_800).default(DEFAULT_TOKEN_TTL_SECONDS),
});
const runFinish = z.strictObject({ status: z.enum(['succeeded', 'failed']), error: z.string().max(4000).nullish() });
const runParams = z.object({ id: idParams.shape.id, run_id: z.string().min(1).max(100) });

const pipelineSchema = z.object({
  ...storedSchema,
  name: z.string(),
  description: z.string().nullable(),
  realm: z.string(),
  definition,
  version: z.number().int(),
});
export const entrySchema = z.object({
  seq: z.number().int(),
  kind: z.enum(['log', 'progress']),
  level: z.string(),
  message: z.string().nullable(),
  phase: z.string().nullable(),
  fraction: z.number().nullable(),
  at: z.string(),
});
export const runSchema = z.object({
  ...storedSchema,
  pipeline_id: z.string(),
  pipeline_version: z.number().int(),
  status: z.enum(['running', 'succeeded', 'failed', 'cancelled']),
  parameters: z.record(z.string(), z.unknown()),
  progress: z.object({ fraction: z.number(), message: z.string().nullable(), phase: z.string().nullable(), at: z.string() }).nullable(),
  phase: z.string().nullable(),
  log_count: z.number().int(),
  started_by: z.string(),
  token_expires_at: z.string(),
  finished_at: z.string().nullable(),
  error: z.string().nullable(),
});

const present = (pipeline: PipelineDoc) => ({
  id: pipeline.id,
  name: pipeline.name,
  description: pipeline.description,
  realm: pipeline.realm,
  definition: pipeline.definition,
  version: pipeline.version,
  created_at: pipeline.created_at,
  updated_at: pipeline.updated_at,
});

export const presentRun = (run: PipelineRunDoc) => ({
  id: run.id,
  pipeline_id: run.pipeline_id,
  pipeline_version: run.pipeline_version,
  status: run.status,
  parameters: run.parameters,
  progress: run.progress,
  phase: run.phase,
  log_count: run.log_count,
  started_by: run.started_by,
  token_expires_at: run.token_expires_at,
  finished_at: run.finished_at,
  error: run.error,
  created_at: run.created_at,
  updated_at: run.updated_at,
});

export const presentEntry = (entry: PipelineRunEntryDoc) => ({
  seq: entry.seq,
  kind: entry.kind,
  level: entry.level,
  message: entry.message,
  phase: entry.phase,
  fraction: entry.fraction,
  at: entry.created_at,
});

/** entries shown inline with a run; the rest through /entries */
const RECENT_ENTRIES = 100;

export function pipelineRoutes({ collections, pipelineRuns }: Services): AnyRoute[] {
  const { pipelines } = collections;
  const listPage = createPageResponder(pipelines, present);
  const listRuns = createPageResponder(collections.pipelineRuns, presentRun);
  /** the run, checked to belong to the pipeline in the path */
  const runOf = async (org: Parameters<typeof pipelineRuns.get>[0], pipelineId: string, runId: string) => {
    const run = await pipelineRuns.get(org, runId);
    if (run.pipeline_id !== pipelineId) throw new ServiceError('not_found', `pipeline run ${runId} not found`);
    return run;
  };
  return [
    route({
      method: 'GET',
      path: '/pipelines',
      tag: 'pipelines',
      summary: 'List pipeline definitions',
      auth: 'bearer',
      permission: 'pipeline:read',
      query: pageQuery,
      response: pageSchema(pipelineSchema),
      handler: async ({ auth, query }) => listPage(auth.orgId, query),
    }),
    route({
      method: 'POST',
      path: '/pipelines',
      tag: 'pipelines',
      summary: 'Create a pipeline definition',
      auth: 'bearer',
      permission: 'pipeline:manage',
      body: pipelineCreate,
      response: pipelineSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        const pipeline = await unique('pipeline', () =>
          pipelines.insert(auth.orgId, {
            name: body.name,
            description: body.description ?? null,
            realm: body.realm,
            definition: body.definition,
            version: 1,
            created_by: auth.userId,
          }),
        );
        return { status: 201, json: present(pipeline) };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Get a pipeline definition',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      response: pipelineSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await getOr404(pipelines, auth.orgId, params.id, 'pipeline')) }),
    }),
    route({
      method: 'PATCH',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Change a pipeline definition (bumps its version)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      body: pipelinePatch,
      response: pipelineSchema,
      handler: async ({ auth, params, body }) => {
        const existing = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        const updated = await unique('pipeline', () =>
          pipelines.update(
            auth.orgId,
            existing.id,
            stripUndefined({
              name: body.name,
              description: body.description,
              realm: body.realm,
              definition: body.definition,
              version: existing.version + 1,
            }),
          ),
        );
        if (!updated) throw new ServiceError('not_found', `pipeline ${params.id} not found`);
        return { status: 200, json: present(updated) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Delete a pipeline definition (409 while a run is running)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        await pipelineRuns.settleExpired(auth.orgId, pipeline.id);
        if ((await collections.pipelineRuns.count(auth.orgId, { pipeline_id: pipeline.id, status: 'running' })) > 0) {
          throw new ServiceError('conflict', 'this pipeline has a running run: finish or cancel it first');
        }
        await pipelines.delete(auth.orgId, pipeline.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'POST',
      path: '/pipelines/:id/runs',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:manage',
      summary: 'Start a run; answers the run and its pipeline-scoped token (shown once) for SERVICE_TOKEN',
      params: idParams,
      body: runStart,
      status: 201,
      creates: true,
      response: z.object({ run: runSchema, token: z.string() }),
      handler: async ({ auth, params, body }) => {
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        const { run, token } = await pipelineRuns.start(auth.orgId, pipeline, auth.userId, body.parameters, body.token_ttl_seconds);
        return { status: 201, json: { run: presentRun(run), token } };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id/runs',
      tag: 'pipelines',
      summary: 'List the runs of a pipeline',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(runSchema),
      handler: async ({ auth, params, query }) => {
        const pipeline = await getOr404(pipelines, auth.orgId, params.id, 'pipeline');
        await pipelineRuns.settleExpired(auth.orgId, pipeline.id);
        return listRuns(auth.orgId, query, { pipeline_id: pipeline.id });
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id/runs/:run_id',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:read',
      summary: `A run with its latest ${RECENT_ENTRIES} log and progress entries`,
      params: runParams,
      response: runSchema.extend({ entries: z.array(entrySchema) }),
      handler: async ({ auth, params }) => {
        const run = await runOf(auth.orgId, params.id, params.run_id);
        const entries = await pipelineRuns.entries(auth.orgId, run.id, Math.max(0, run.log_count - RECENT_ENTRIES), RECENT_ENTRIES);
        return { status: 200, json: { ...presentRun(run), entries: entries.map(presentEntry) } };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id/runs/:run_id/entries',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:read',
      summary: 'Log and progress entries of a run, in order, after `after` (a seq)',
      params: runParams,
      query: z.object({ after: decimalInteger('after', 0, Number.MAX_SAFE_INTEGER).default(0), limit: decimalInteger('limit', 1, 1000).default(200) }),
      response: z.object({ items: z.array(entrySchema), next_after: z.number().int().nullable() }),
      handler: async ({ auth, params, query }) => {
        const run = await runOf(auth.orgId, params.id, params.run_id);
        const items = await pipelineRuns.entries(auth.orgId, run.id, query.after, query.limit);
        const last = items.at(-1);
        return { status: 200, json: { items: items.map(presentEntry), next_after: last && last.seq < run.log_count ? last.seq : null } };
      },
    }),
    route({
      method: 'POST',
      path: '/pipelines/:id/runs/:run_id/finish',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:manage',
      summary: 'Record the outcome of a running run (409 when it has ended)',
      params: runParams,
      body: runFinish,
      response: runSchema,
      handler: async ({ auth, params, body }) => {
        await runOf(auth.orgId, params.id, params.run_id);
        return { status: 200, json: presentRun(await pipelineRuns.finish(auth.orgId, params.run_id, body.status, body.error ?? null)) };
      },
    }),
    route({
      method: 'POST',
      path: '/pipelines/:id/runs/:run_id/cancel',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:manage',
      summary: 'Cancel a running run; its token can no longer report (409 when it has ended)',
      params: runParams,
      response: runSchema,
      handler: async ({ auth, params }) => {
        await runOf(auth.orgId, params.id, params.run_id);
        return { status: 200, json: presentRun(await pipelineRuns.finish(auth.orgId, params.run_id, 'cancelled', null)) };
      },
    }),
  ];
}
