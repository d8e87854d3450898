/**
 * /agents: configured agents of the organization, and /agents/types, the
 * catalog they are made from. `agent_type` is fixed at creation; `config` is
 * validated against the type's schema on every write and replaced whole by a
 * PATCH. The `default` agent, which tasks fall back to, cannot be deleted or
 * renamed.
 */
import { z } from 'zod';
import { AGENT_TYPE_NAMES, AGENT_TYPES, configJsonSchema } from '../../domains/agents/agent-types.js';
import type { AgentDoc } from '../../domains/agents/documents.js';
import type { Filter } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema, queryFlag } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import { safeName } from '../safe-text.js';
import type { Services } from '../services.js';

const AGENT_NAME = safeName(z.string().trim().min(1, { message: 'name must not be empty' }).max(100, { message: 'name is at most 100 characters' }));

const AGENT_TYPE = z.enum(AGENT_TYPE_NAMES, { message: `agent_type must be one of ${AGENT_TYPE_NAMES.join(', ')}` });

/** any JSON object; the type's schema decides what is in it */
const CONFIG = z.record(z.string(), z.unknown(), { message: 'config must be a JSON object' });

const agentCreate = z.strictObject({
  agent_type: AGENT_TYPE,
  name: AGENT_NAME,
  config: CONFIG.default({}),
  enabled: z.boolean().default(true),
});
const agentPatch = z.strictObject({
  agent_type: z.string().optional(),
  name: AGENT_NAME.optional(),
  config: CONFIG.optional(),
  enabled: z.boolean().optional(),
});

const agentQuery = pageQuery.extend({
  enabled: queryFlag('enabled').optional(),
  agent_type: AGENT_TYPE.optional(),
});

const agentSchema = z.object({
  ...storedSchema,
  agent_type: z.string(),
  name: z.string(),
  config: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
});

const agentTypeSchema = z.object({
  agent_type: z.string(),
  description: z.string(),
  config_schema: z.record(z.string(), z.unknown()),
});

const present = (agent: AgentDoc) => ({
  id: agent.id,
  agent_type: agent.agent_type,
  name: agent.name,
  config: agent.config,
  enabled: agent.enabled,
  created_at: agent.created_at,
  updated_at: agent.updated_at,
});

export function agentRoutes({ agents }: Services): AnyRoute[] {
  const listPage = createPageResponder(agents.listing, present);
  // the catalog is static: build its JSON Schemas once
  const catalog = AGENT_TYPES.map((type) => ({
    agent_type: type.agent_type,
    description: type.description,
    config_schema: configJsonSchema(type),
  }));

  return [
    route({
      method: 'GET',
      path: '/agents/types',
      tag: 'agents',
      summary: "The agent-type catalog with each type's config schema",
      auth: 'bearer',
      permission: 'agent:read',
      response: z.object({ items: z.array(agentTypeSchema) }),
      handler: async () => ({ status: 200, json: { items: catalog } }),
    }),
    route({
      method: 'GET',
      path: '/agents',
      tag: 'agents',
      summary: 'List agents (filters: enabled, agent_type)',
      auth: 'bearer',
      permission: 'agent:read',
      query: agentQuery,
      response: pageSchema(agentSchema),
      handler: async ({ auth, query }) => {
        const filter: Record<string, Filter[string]> = {};
        if (query.enabled !== undefined) filter['enabled'] = query.enabled;
        if (query.agent_type !== undefined) filter['agent_type'] = query.agent_type;
        return listPage(auth.orgId, query, filter);
      },
    }),
    route({
      method: 'POST',
      path: '/agents',
      tag: 'agents',
      summary: 'Create an agent',
      auth: 'bearer',
      permission: 'agent:manage',
      body: agentCreate,
      response: agentSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await agents.create(auth.orgId, body)) }),
    }),
    route({
      method: 'GET',
      path: '/agents/:id',
      tag: 'agents',
      summary: 'Get an agent by id or name',
      auth: 'bearer',
      permission: 'agent:read',
      params: idParams,
      response: agentSchema,
      handler: async ({ auth, params }) => ({ status: 200, json: present(await agents.get(auth.orgId, params.id)) }),
    }),
    route({
      method: 'PATCH',
      path: '/agents/:id',
      tag: 'agents',
      summary: 'Update an agent (agent_type is immutable; config is replaced whole)',
      auth: 'bearer',
      permission: 'agent:manage',
      params: idParams,
      body: agentPatch,
      response: agentSchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await agents.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/agents/:id',
      tag: 'agents',
      summary: 'Delete an agent (not `default`)',
      auth: 'bearer',
      permission: 'agent:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await agents.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
