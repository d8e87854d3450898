/**
 * /graph: the context graph of a realm. Nodes are `Label:key`; writes are
 * upserts in batches (one transaction per request); reads are get, text
 * search, expansion around a node, Cypher (read-only unless the caller has
 * graph:write) and stats. The store does the work (runtime/graph/).
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';
import { paramsProblem } from '../../runtime/graph/cypher-params.js';
import { MAX_KEY_LENGTH, parseNodeId } from '../../runtime/graph/names.js';
import type { GraphScope, GraphStore } from '../../runtime/graph/store.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import type { OrgId } from '../../runtime/store/types.js';
import { decimalInteger, queryFlag } from '../pagination.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';
import { fastNodesBody, fastRelationshipsBody, nodesBody, relationshipsBody } from './graph-bodies.js';

const MAX_SEARCH_LIMIT = 100;
const MAX_EXPAND_LIMIT = 1000;

const NAME = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, { message: 'use letters, digits and "_", starting with a letter (at most 64)' });
const REALM = z.string().min(1).max(100).default(DEFAULT_REALM);
const PROPERTIES = z.record(z.string(), z.unknown());
/** `A,B` in a query string */
const NAME_LIST = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  )
  .pipe(z.array(NAME).max(50));

const realmQuery = z.object({ realm: REALM });
const nodeParams = z.object({
  id: z
    .string()
    .min(1)
    .max(MAX_KEY_LENGTH + 70),
});
const searchQuery = z.object({
  realm: REALM,
  query: z.string().trim().min(1, { message: 'query must not be empty' }).max(1000),
  limit: decimalInteger('limit', 1, MAX_SEARCH_LIMIT).default(20),
  labels: NAME_LIST.optional(),
});
const expandQuery = z.object({
  realm: REALM,
  depth: decimalInteger('depth', 1, 5).default(1),
  direction: z.enum(['both', 'out', 'in'], { message: 'direction is both, out or in' }).default('both'),
  types: NAME_LIST.optional(),
  limit: decimalInteger('limit', 1, MAX_EXPAND_LIMIT).default(100),
});
const cypherBody = z.strictObject({
  realm: REALM,
  query: z.string().trim().min(1, { message: 'query must not be empty' }).max(100_000),
  // bounded before any other work (depth, keys, values): see cypher-params.ts
  params: z
    .record(z.string(), z.unknown())
    .superRefine((params, context) => {
      const problem = paramsProblem(params);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .default({}),
});
const statsQuery = z.object({ realm: REALM, labels: queryFlag('labels').default(false) });

const nodeSchema = z.object({ id: z.string(), label: z.string(), key: z.string(), properties: PROPERTIES });
const relationshipSchema = z.object({ type: z.string(), from: z.string(), to: z.string(), properties: PROPERTIES });

export function graphRoutes({ graph, realms }: Services): AnyRoute[] {
  /** the store and the scope, or 404 for a realm the organization does not have */
  const scopeOf = async (orgId: OrgId, realm: string): Promise<{ store: GraphStore; scope: GraphScope }> => {
    if (!graph) throw new ServiceError('service_unavailable', 'no graph store is configured');
    // 404 for a realm the organization does not have
    await realms.get(orgId, realm);
    return { store: graph, scope: { orgId, realm } };
  };
  const nodeNotFound = (id: string, realm: string) => new ServiceError('not_found', `node ${id} not found in realm ${realm}`);

  return [
    route({
      method: 'POST',
      path: '/graph/nodes',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:write',
      summary: 'Upsert nodes by (label, _key), up to 10,000 in one transaction',
      body: nodesBody,
      bodyFastPath: fastNodesBody,
      maxBodyBytes: 32 * 1024 * 1024,
      response: z.object({ realm: z.string(), upserted: z.number().int() }),
      handler: async ({ auth, body }) => {
        const { store, scope } = await scopeOf(auth.orgId, body.realm);
        const upserted = await store.upsertNodes(scope, body.nodes);
        return { status: 200, json: { realm: body.realm, upserted } };
      },
    }),
    route({
      method: 'POST',
      path: '/graph/relationships',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:write',
      summary: 'Upsert relationships by (type, from, to); missing end nodes are created with only their _key',
      body: relationshipsBody,
      bodyFastPath: fastRelationshipsBody,
      maxBodyBytes: 32 * 1024 * 1024,
      response: z.object({ realm: z.string(), upserted: z.number().int() }),
      handler: async ({ auth, body }) => {
        const { store, scope } = await scopeOf(auth.orgId, body.realm);
        const upserted = await store.upsertRelationships(scope, body.relationships);
        return { status: 200, json: { realm: body.realm, upserted } };
      },
    }),
    route({
      method: 'GET',
      path: '/graph/search',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:read',
      summary: 'Full-text search over string properties, best first',
      query: searchQuery,
      response: z.object({ items: z.array(nodeSchema.extend({ score: z.number() })), total: z.number().int() }),
      handler: async ({ auth, query }) => {
        const { store, scope } = await scopeOf(auth.orgId, query.realm);
        const result = await store.search(scope, { query: query.query, limit: query.limit, labels: query.labels });
        return { status: 200, json: result };
      },
    }),
    route({
      method: 'GET',
      path: '/graph/stats',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:read',
      summary: 'Node and relationship counts (per label and type with labels=true)',
      query: statsQuery,
      response: z.object({
        realm: z.string(),
        node_count: z.number().int(),
        relationship_count: z.number().int(),
        labels: z.record(z.string(), z.number().int()).optional(),
        relationship_types: z.record(z.string(), z.number().int()).optional(),
      }),
      handler: async ({ auth, query }) => {
        const { store, scope } = await scopeOf(auth.orgId, query.realm);
        return { status: 200, json: { realm: query.realm, ...(await store.stats(scope, query.labels)) } };
      },
    }),
    route({
      method: 'POST',
      path: '/graph/cypher',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:read',
      summary:
        "Run one Cypher statement in a realm, judged by the engine's plan: reads; node/relationship writes need graph:write; files, other databases, extensions, settings, transactions and schema changes are refused (400)",
      body: cypherBody,
      response: z.object({ columns: z.array(z.string()), rows: z.array(z.record(z.string(), z.unknown())) }),
      handler: async ({ auth, body }) => {
        const { store, scope } = await scopeOf(auth.orgId, body.realm);
        const result = await store.cypher(scope, body.query, body.params, { allowWrite: auth.permissions.has('graph:write') });
        return { status: 200, json: result };
      },
    }),
    route({
      method: 'GET',
      path: '/graph/nodes/:id',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:read',
      summary: 'Get a node by its id Label:key (URL-encoded)',
      params: nodeParams,
      query: realmQuery,
      response: nodeSchema.extend({ realm: z.string() }),
      handler: async ({ auth, params, query }) => {
        const { label, key } = parseNodeId(params.id);
        const { store, scope } = await scopeOf(auth.orgId, query.realm);
        const node = await store.getNode(scope, label, key);
        if (!node) throw nodeNotFound(params.id, query.realm);
        return { status: 200, json: { id: node.id, label: node.label, key: node.key, realm: query.realm, properties: node.properties } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/graph/nodes/:id',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:write',
      summary: 'Delete a node and its relationships',
      params: nodeParams,
      query: realmQuery,
      response: z.object({ id: z.string(), deleted: z.literal(true), relationships_deleted: z.number().int() }),
      handler: async ({ auth, params, query }) => {
        const { label, key } = parseNodeId(params.id);
        const { store, scope } = await scopeOf(auth.orgId, query.realm);
        const deleted = await store.deleteNode(scope, label, key);
        if (!deleted) throw nodeNotFound(params.id, query.realm);
        return { status: 200, json: { id: params.id, deleted: true, relationships_deleted: deleted.relationshipsDeleted } };
      },
    }),
    route({
      method: 'GET',
      path: '/graph/nodes/:id/expand',
      tag: 'graph',
      auth: 'bearer',
      permission: 'graph:read',
      summary: 'The subgraph around a node (depth 1-5, direction, relationship types)',
      params: nodeParams,
      query: expandQuery,
      response: z.object({ nodes: z.array(nodeSchema), relationships: z.array(relationshipSchema) }),
      handler: async ({ auth, params, query }) => {
        const { label, key } = parseNodeId(params.id);
        const { store, scope } = await scopeOf(auth.orgId, query.realm);
        const subgraph = await store.expand(scope, label, key, query);
        if (!subgraph) throw nodeNotFound(params.id, query.realm);
        return { status: 200, json: subgraph };
      },
    }),
  ];
}
