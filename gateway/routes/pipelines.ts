/**
 * /pipelines: pipeline definitions and their runs. Starting a run answers the
 * run and, once, a pipeline-scoped token for the executor's SERVICE_TOKEN;
 * what the executor reports through /pipeline-agent shows up in the run.
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { createPageResponder, decimalInteger, decodeCursor, encodeCursor, pageQuery, pageSchema } from '../pagination.js';
import { idParams } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { REALM_NAME } from './realms.js';
import {
  definition,
  entrySchema,
  etagOf,
  expectedVersion,
  pipelineSchema,
  present,
  presentEntry,
  presentRun,
  presentVersion,
  runSchema,
  versionSchema,
} from './pipeline-present.js';

const NAME = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: 'name uses letters, digits, ".", "-" and "_"' });
/** 6 hours by default; a week at most */
const DEFAULT_TOKEN_TTL_SECONDS = 21_600;
const VERSION = z.number().int().min(1).max(999_999_999);
const CHANGE_MESSAGE = z.string().max(2000).nullish();

const pipelineCreate = z.strictObject({
  name: NAME,
  description: z.string().max(2000).nullish(),
  realm: REALM_NAME.default('default'),
  definition: definition.default({}),
  message: CHANGE_MESSAGE,
});
const pipelinePatch = z.strictObject({
  name: NAME.optional(),
  description: z.string().max(2000).nullable().optional(),
  realm: REALM_NAME.optional(),
  definition: definition.optional(),
  message: CHANGE_MESSAGE,
  expected_version: VERSION.optional(),
});
const revertBody = z.strictObject({ version: VERSION, message: CHANGE_MESSAGE, expected_version: VERSION.optional() });
const runStart = z.strictObject({
  parameters: z.record(z.string(), z.unknown()).default({}),
  token_ttl_seconds: z.number().int().min(60).max(604_800).default(DEFAULT_TOKEN_TTL_SECONDS),
});
const runFinish = z.strictObject({ status: z.enum(['succeeded', 'failed']), error: z.string().max(4000).nullish() });
const runParams = z.object({ id: idParams.shape.id, run_id: z.string().min(1).max(100) });
const versionParams = z.object({ id: idParams.shape.id, version: decimalInteger('version', 1, 999_999_999) });

/** entries shown inline with a run; the rest through /entries */
const RECENT_ENTRIES = 100;

export function pipelineRoutes({ pipelines, pipelineRuns }: Services): AnyRoute[] {
  const listPage = createPageResponder(pipelines.listing, present);
  const listRuns = createPageResponder(pipelines.runListing, presentRun);
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
      summary: 'Create a pipeline definition (version 1)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      body: pipelineCreate,
      response: pipelineSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => {
        const fields = { name: body.name, description: body.description ?? null, realm: body.realm, definition: body.definition };
        const pipeline = await pipelines.create(auth.orgId, fields, { userId: auth.userId, message: body.message });
        return { status: 201, json: present(pipeline), headers: etagOf(pipeline) };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Get a pipeline definition (ETag: its version)',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      response: pipelineSchema,
      handler: async ({ auth, params }) => {
        const pipeline = await pipelines.get(auth.orgId, params.id);
        return { status: 200, json: present(pipeline), headers: etagOf(pipeline) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Change a pipeline definition: a new version (If-Match or expected_version: 409 when stale)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      body: pipelinePatch,
      response: pipelineSchema,
      errors: [409],
      handler: async ({ auth, params, body, request }) => {
        const { message, expected_version: fromBody, ...patch } = body;
        const change = { userId: auth.userId, message, expectedVersion: expectedVersion(request.headers, fromBody) };
        const pipeline = await pipelines.update(auth.orgId, params.id, patch, change);
        return { status: 200, json: present(pipeline), headers: etagOf(pipeline) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/pipelines/:id',
      tag: 'pipelines',
      summary: 'Delete a pipeline definition and its versions (409 while a run is running)',
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      status: 204,
      errors: [409],
      handler: async ({ auth, params }) => {
        await pipelines.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id/versions',
      tag: 'pipelines',
      summary: 'Versions of a pipeline definition, newest first',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(versionSchema),
      handler: async ({ auth, params, query }) => {
        let before: number | null = null;
        if (query.cursor !== undefined) {
          before = Number(decodeCursor(query, query.cursor));
          if (!Number.isSafeInteger(before)) throw new ServiceError('invalid_cursor', 'cursor is not one this server issued');
        }
        const page = await pipelines.versions(auth.orgId, params.id, query.limit, before);
        return {
          status: 200,
          json: {
            items: page.items.map(presentVersion),
            next_cursor: page.nextBefore === null ? null : encodeCursor(query, String(page.nextBefore)),
            total: page.total,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/pipelines/:id/versions/:version',
      tag: 'pipelines',
      summary: 'One version of a pipeline definition',
      auth: 'bearer',
      permission: 'pipeline:read',
      params: versionParams,
      response: versionSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: presentVersion(await pipelines.version(auth.orgId, params.id, params.version)) }),
    }),
    route({
      method: 'POST',
      path: '/pipelines/:id/revert',
      tag: 'pipelines',
      summary: "Make the pipeline equal an earlier version's content, recorded as a new version (reverted_from)",
      auth: 'bearer',
      permission: 'pipeline:manage',
      params: idParams,
      body: revertBody,
      response: pipelineSchema,
      errors: [409],
      handler: async ({ auth, params, body, request }) => {
        const change = { userId: auth.userId, message: body.message, expectedVersion: expectedVersion(request.headers, body.expected_version) };
        const pipeline = await pipelines.revert(auth.orgId, params.id, body.version, change);
        return { status: 200, json: present(pipeline), headers: etagOf(pipeline) };
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
        const pipeline = await pipelines.get(auth.orgId, params.id);
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
        const pipeline = await pipelines.forRunListing(auth.orgId, params.id);
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
        const run = await pipelines.run(auth.orgId, params.id, params.run_id);
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
        const run = await pipelines.run(auth.orgId, params.id, params.run_id);
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
      summary: 'Record the outcome of a running run (409 when it has ended); its agent runs are cancelled',
      params: runParams,
      body: runFinish,
      response: runSchema,
      handler: async ({ auth, params, body }) => {
        await pipelines.run(auth.orgId, params.id, params.run_id);
        return { status: 200, json: presentRun(await pipelineRuns.finish(auth.orgId, params.run_id, body.status, body.error ?? null)) };
      },
    }),
    route({
      method: 'POST',
      path: '/pipelines/:id/runs/:run_id/cancel',
      tag: 'pipelines',
      auth: 'bearer',
      permission: 'pipeline:manage',
      summary: 'Cancel a running run and its agent runs; its token can no longer report (409 when it has ended)',
      params: runParams,
      response: runSchema,
      handler: async ({ auth, params }) => {
        await pipelines.run(auth.orgId, params.id, params.run_id);
        return { status: 200, json: presentRun(await pipelineRuns.finish(auth.orgId, params.run_id, 'cancelled', null)) };
      },
    }),
  ];
}
