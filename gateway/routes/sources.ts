/**
 * /sources: configured connections to external systems (connector CRUD,
 * validation, sync jobs and their history) and /sources/catalog (the
 * connector kinds with their config schemas and tools). Configs are never
 * returned in clear (domains/sources/config-secrets.ts).
 */
import { z } from 'zod';
import { REALM_NAME } from './realms.js';
import type { LoadedPlugin } from '../../runtime/tools/registry.js';
import { maskConfig } from '../../domains/sources/config-secrets.js';
import type { SourceService } from '../../domains/sources/source-service.js';
import { nextFireOf } from '../../domains/sources/sync-schedule.js';
import type { SourceDoc, SourceSyncJobDoc } from '../../domains/sources/types.js';
import type { OrgId } from '../../runtime/store/types.js';
import { listOptions, pageEnvelope, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { rejectImmutable, unique } from '../../runtime/store/documents.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

const SOURCE_NAME = safeName(z.string().trim().min(1).max(100, { message: 'source name is at most 100 characters' }));
const configBody = z.record(z.string(), z.unknown());
const schedule = z.string().max(200);
const visibility = z.enum(['organization', 'restricted'], { message: 'visibility is "organization" or "restricted"' });

const sourceCreate = z.strictObject({
  name: SOURCE_NAME,
  connector: z.string().min(1).max(100),
  realm: REALM_NAME.optional(),
  config: configBody,
  schedule: schedule.optional(),
  visibility: visibility.optional(),
});

const sourcePatch = z.strictObject({
  name: SOURCE_NAME.optional(),
  connector: z.string().optional(),
  realm: REALM_NAME.optional(),
  config: configBody.optional(),
  schedule: schedule.optional(),
  visibility: visibility.optional(),
});

const errorSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

const sourceSchema = z.object({
  ...storedSchema,
  name: z.string(),
  connector: z.string(),
  realm: z.string(),
  config: z.record(z.string(), z.unknown()).describe('secret fields are masked as "********"; send them back unchanged to keep them'),
  schedule: z.string(),
  next_sync_at: z.string().nullable(),
  visibility: visibility,
  status: z.enum(['pending', 'synced', 'failed', 'syncing']),
  last_error: errorSchema.nullable(),
  last_validated_at: z.string().nullable(),
  last_synced_at: z.string().nullable(),
  created_by: z.string(),
});

const jobSchema = z.object({
  ...storedSchema,
  source_id: z.string(),
  status: z.enum(['running', 'succeeded', 'failed']),
  trigger: z.enum(['manual', 'schedule']),
  progress: z.number(),
  message: z.string().nullable(),
  nodes: z.number(),
  relationships: z.number(),
  details: z.record(z.string(), z.unknown()).nullable(),
  error: errorSchema.nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});

const catalogSchema = z.object({
  items: z.array(
    z.object({
      kind: z.string(),
      version: z.string(),
      description: z.string(),
      origin: z.string(),
      config_schema: z.record(z.string(), z.unknown()),
      supports_sync: z.boolean(),
      dynamic_tools: z.boolean(),
      tools: z.array(
        z.object({ name: z.string(), description: z.string(), effect: z.enum(['read', 'write']), input_schema: z.record(z.string(), z.unknown()) }),
      ),
    }),
  ),
  problems: z.array(z.object({ plugin: z.string(), origin: z.string(), problems: z.array(z.string()) })),
});

const jobParams = z.object({ id: z.string().min(1).max(100), job_id: z.string().min(1).max(100) });

const presentJob = (job: SourceSyncJobDoc) => ({
  id: job.id,
  source_id: job.source_id,
  status: job.status,
  trigger: job.trigger,
  progress: job.progress,
  message: job.message,
  nodes: job.nodes,
  relationships: job.relationships,
  details: job.details,
  error: job.error,
  started_at: job.started_at,
  finished_at: job.finished_at,
  created_at: job.created_at,
  updated_at: job.updated_at,
});

const presentKind = (plugin: LoadedPlugin) => ({
  kind: plugin.kind,
  version: plugin.plugin.version,
  description: plugin.plugin.description,
  origin: plugin.origin,
  config_schema: plugin.plugin.configSchema,
  supports_sync: typeof plugin.plugin.sync === 'function',
  dynamic_tools: typeof plugin.plugin.listTools === 'function',
  tools: plugin.tools.map((tool) => ({ name: tool.name, description: tool.tool.description, effect: tool.tool.effect, input_schema: tool.tool.input_schema })),
});

export function sourceRoutes({ sourceService }: Services): AnyRoute[] {
  const service: SourceService = sourceService;
  const present = (org: OrgId) => (source: SourceDoc) => {
    let config: Record<string, unknown>;
    try {
      config = maskConfig(service.configOf(source, org), service.registry.plugin(source.connector)?.plugin.configSchema);
    } catch {
      // a config sealed under another key: say so rather than failing the whole list
      config = { unreadable: 'the config does not decrypt with the configured SOURCE_CONFIG_KEY; set it again' };
    }
    return {
      id: source.id,
      name: source.name,
      connector: source.connector,
      realm: source.realm,
      config,
      schedule: source.schedule,
      next_sync_at: nextFireOf(source.schedule),
      visibility: source.visibility,
      status: source.status,
      last_error: source.last_error,
      last_validated_at: source.last_validated_at,
      last_synced_at: source.last_synced_at,
      created_by: source.created_by,
      created_at: source.created_at,
      updated_at: source.updated_at,
    };
  };

  return [
    route({
      method: 'GET',
      path: '/sources',
      tag: 'sources',
      summary: 'List sources (configs masked)',
      auth: 'bearer',
      permission: 'source:read',
      query: pageQuery.extend({ connector: z.string().max(100).optional() }),
      response: pageSchema(sourceSchema),
      handler: async ({ auth, query }) => {
        const filter = query.connector === undefined ? undefined : { connector: query.connector };
        const page = await service.list(auth.orgId, listOptions(query, filter));
        return { status: 200, json: pageEnvelope(query, page, present(auth.orgId)) };
      },
    }),
    route({
      method: 'POST',
      path: '/sources',
      tag: 'sources',
      auth: 'bearer',
      permission: 'source:manage',
      creates: true,
      status: 201,
      summary: 'Create a source (status `pending` until validated with GET /sources/:id/test)',
      body: sourceCreate,
      response: sourceSchema,
      handler: async ({ auth, body }) => {
        const source = await unique('source', () => service.create(auth.orgId, auth.userId, body));
        return { status: 201, json: present(auth.orgId)(source) };
      },
    }),
    route({
      method: 'GET',
      path: '/sources/catalog',
      tag: 'sources',
      auth: 'bearer',
      permission: 'source:read',
      summary: 'Connector kinds a source can use, with their config schemas and tools; `problems` lists plugins refused at start',
      response: catalogSchema,
      handler: async () => ({
        status: 200,
        json: {
          items: service.registry.plugins.filter((plugin) => !plugin.sourceless).map(presentKind),
          problems: service.registry.problems,
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/sources/:id',
      tag: 'sources',
      summary: 'A source (config masked)',
      auth: 'bearer',
      permission: 'source:read',
      params: idParams,
      response: sourceSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(auth.orgId)(await service.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/sources/:id',
      tag: 'sources',
      auth: 'bearer',
      permission: 'source:manage',
      summary: 'Change a source (connector is immutable; masked secrets sent back keep their stored value; a new config returns it to `pending`)',
      params: idParams,
      body: sourcePatch,
      response: sourceSchema,
      handler: async ({ auth, params, body }) => {
        const source = await service.get(auth.orgId, params.id);
        rejectImmutable(source, body, ['connector']);
        const updated = await unique('source', () => service.update(auth.orgId, source.id, body));
        return { status: 200, json: present(auth.orgId)(updated) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/sources/:id',
      tag: 'sources',
      summary: 'Delete a source and its sync history (409 while it syncs)',
      auth: 'bearer',
      permission: 'source:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await service.remove(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
    route({
      method: 'GET',
      path: '/sources/:id/test',
      tag: 'sources',
      auth: 'bearer',
      permission: 'source:manage',
      summary: 'Validate the source against its system: ok lists it as `synced`; bad credentials answer 422 `source_validation_failed` with details',
      params: idParams,
      response: z.object({ ok: z.literal(true), source: sourceSchema }),
      handler: async ({ auth, params }) => {
        const source = await service.test(auth.orgId, params.id);
        return { status: 200, json: { ok: true, source: present(auth.orgId)(source) } };
      },
    }),
    route({
      method: 'POST',
      path: '/sources/:id/sync',
      tag: 'sources',
      auth: 'bearer',
      permission: 'source:manage',
      status: 202,
      summary: 'Start a sync job (409 when one is running or the connector has no sync); follow it at /sources/:id/jobs/:job_id',
      params: idParams,
      response: jobSchema,
      handler: async ({ auth, params }) => {
        const job = await service.startSync(auth.orgId, params.id, 'manual', auth.userId);
        return { status: 202, json: presentJob(job), headers: { location: `/api/v1/sources/${job.source_id}/jobs/${job.id}` } };
      },
    }),
    route({
      method: 'GET',
      path: '/sources/:id/jobs',
      tag: 'sources',
      summary: 'Sync history of a source, oldest first',
      auth: 'bearer',
      permission: 'source:read',
      params: idParams,
      query: pageQuery,
      response: pageSchema(jobSchema),
      handler: async ({ auth, params, query }) => {
        const source = await service.get(auth.orgId, params.id);
        return { status: 200, json: pageEnvelope(query, await service.jobs(auth.orgId, source.id, listOptions(query)), presentJob) };
      },
    }),
    route({
      method: 'GET',
      path: '/sources/:id/jobs/:job_id',
      tag: 'sources',
      summary: 'One sync job',
      auth: 'bearer',
      permission: 'source:read',
      params: jobParams,
      response: jobSchema,
      handler: async ({ auth, params }) => {
        const source = await service.get(auth.orgId, params.id);
        return { status: 200, json: presentJob(await service.job(auth.orgId, source.id, params.job_id)) };
      },
    }),
  ];
}
