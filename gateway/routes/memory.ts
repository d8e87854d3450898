/**
 * /memory: facts, guidelines, preferences and notes agents recall, each in a
 * realm of the organization. `POST /memory/recall` ranks entries by the
 * store's full-text search weighted by importance (domains/memory/recall.ts,
 * shared with the `memory.recall` tool).
 */
import { z } from 'zod';
import { MAX_RECALL_LIMIT } from '../../domains/memory/recall.js';
import { MAX_MEMORY_TEXT_BYTES, MEMORY_KINDS, type MemoryDoc } from '../../domains/memory/documents.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { ServiceError } from '../../runtime/errors.js';
import type { Filter } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

const KIND = z.enum(MEMORY_KINDS, { message: `kind is one of ${MEMORY_KINDS.join(', ')}` });
const REALM = z.string().min(1).max(100);
const TEXT = z
  .string()
  .min(1, { message: 'text must not be empty' })
  .refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_MEMORY_TEXT_BYTES, {
    message: `text is at most 32 KiB (${MAX_MEMORY_TEXT_BYTES} bytes of UTF-8)`,
  });
const TITLE = safeName(z.string().trim().max(200));
const TAGS = z.array(safeName(z.string().trim().min(1).max(100))).max(50, { message: 'at most 50 tags' });
const IMPORTANCE = z.number().min(0, { message: 'importance is at least 0' }).max(1, { message: 'importance is at most 1' });

const memoryCreate = z.strictObject({
  kind: KIND.default('fact'),
  realm: REALM.default(DEFAULT_REALM),
  text: TEXT,
  title: TITLE.nullish(),
  tags: TAGS.default([]),
  importance: IMPORTANCE.default(0.5),
});
const memoryPatch = z.strictObject({
  kind: KIND.optional(),
  realm: REALM.optional(),
  text: TEXT.optional(),
  title: TITLE.nullable().optional(),
  tags: TAGS.optional(),
  importance: IMPORTANCE.optional(),
});
const memoryQuery = pageQuery.extend({ realm: REALM.optional(), kind: KIND.optional() });
const recallBody = z.strictObject({
  query: z.string().trim().min(1, { message: 'query must not be empty' }).max(1000, { message: 'query is at most 1000 characters' }),
  realm: REALM.optional(),
  kind: KIND.optional(),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_RECALL_LIMIT, { message: `limit is at most ${MAX_RECALL_LIMIT}` })
    .default(10),
  /** each entry's linked entities (`MENTIONS`, written by POST /memory/sync); needs graph:read */
  expand: z.boolean().default(false),
});
const syncBody = z.strictObject({ realm: REALM.default(DEFAULT_REALM) });
const syncSchema = z.object({
  realm: z.string(),
  memories: z.number().int(),
  nodes_upserted: z.number().int(),
  nodes_deleted: z.number().int(),
  links_added: z.number().int(),
  links_removed: z.number().int(),
});
/** the most linked entities answered per recalled entry */
const MAX_EXPANDED = 25;
const entitySchema = z.object({ id: z.string(), label: z.string(), key: z.string(), properties: z.record(z.string(), z.unknown()) });

const memorySchema = z.object({
  ...storedSchema,
  kind: KIND,
  realm: z.string(),
  text: z.string(),
  title: z.string().nullable(),
  tags: z.array(z.string()),
  importance: z.number(),
  created_by: z.string(),
});
const recallSchema = z.object({ items: z.array(z.object({ memory: memorySchema, score: z.number(), entities: z.array(entitySchema).optional() })) });

const present = (memory: MemoryDoc) => ({
  id: memory.id,
  kind: memory.kind,
  realm: memory.realm,
  text: memory.text,
  title: memory.title,
  tags: memory.tags,
  importance: memory.importance,
  created_by: memory.created_by,
  created_at: memory.created_at,
  updated_at: memory.updated_at,
});

const filterOf = (query: { realm?: string | undefined; kind?: string | undefined }): Filter => {
  const filter: Record<string, Filter[string]> = {};
  if (query.realm !== undefined) filter['realm'] = query.realm;
  if (query.kind !== undefined) filter['kind'] = query.kind;
  return filter;
};

export function memoryRoutes({ memory, memoryGraph }: Services): AnyRoute[] {
  const listPage = createPageResponder(memory.listing, present);

  return [
    route({
      method: 'GET',
      path: '/memory',
      tag: 'memory',
      summary: 'List memory entries (filters: realm, kind)',
      auth: 'bearer',
      permission: 'memory:read',
      query: memoryQuery,
      response: pageSchema(memorySchema),
      handler: async ({ auth, query }) => {
        if (query.realm !== undefined) await memory.requireRealm(auth.orgId, query.realm);
        return listPage(auth.orgId, query, filterOf(query));
      },
    }),
    route({
      method: 'POST',
      path: '/memory',
      tag: 'memory',
      summary: 'Store a memory entry',
      auth: 'bearer',
      permission: 'memory:manage',
      body: memoryCreate,
      response: memorySchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await memory.create(auth.orgId, auth.userId, body)) }),
    }),
    route({
      method: 'POST',
      path: '/memory/recall',
      tag: 'memory',
      auth: 'bearer',
      permission: 'memory:read',
      summary: 'Recall entries by full-text relevance weighted by importance',
      body: recallBody,
      response: recallSchema,
      handler: async ({ auth, body }) => {
        if (body.expand && !auth.permissions.has('graph:read')) throw new ServiceError('forbidden', 'expand reads the graph: it needs graph:read');
        const recalled = await memory.recall(auth.orgId, body);
        const items = await Promise.all(
          recalled.map(async ({ doc, score }) => ({
            memory: present(doc),
            score,
            ...(body.expand ? { entities: await memoryGraph.entitiesOf(auth.orgId, doc, MAX_EXPANDED) } : {}),
          })),
        );
        return { status: 200, json: { items } };
      },
    }),
    route({
      method: 'POST',
      path: '/memory/sync',
      tag: 'memory',
      auth: 'bearer',
      permission: 'memory:manage',
      summary:
        "Write the realm's memory entries into its graph as Memory nodes linked (MENTIONS) to the entities they name; idempotent (needs graph:write too)",
      body: syncBody,
      response: syncSchema,
      handler: async ({ auth, body }) => {
        if (!auth.permissions.has('graph:write')) throw new ServiceError('forbidden', 'a memory sync writes the graph: it needs graph:write');
        await memory.requireRealm(auth.orgId, body.realm);
        return { status: 200, json: await memoryGraph.sync(auth.orgId, body.realm) };
      },
    }),
    route({
      method: 'GET',
      path: '/memory/:id',
      tag: 'memory',
      summary: 'Get a memory entry',
      auth: 'bearer',
      permission: 'memory:read',
      params: idParams,
      response: memorySchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await memory.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/memory/:id',
      tag: 'memory',
      summary: 'Update a memory entry',
      auth: 'bearer',
      permission: 'memory:manage',
      params: idParams,
      body: memoryPatch,
      response: memorySchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await memory.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/memory/:id',
      tag: 'memory',
      summary: 'Delete a memory entry',
      auth: 'bearer',
      permission: 'memory:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await memory.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
