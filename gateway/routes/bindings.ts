/**
 * /bindings: which agent answers which messages of a chat channel. Each
 * binding runs as a `channel_binding` actor (domains/channels/); creating,
 * changing and deleting a binding starts, updates and stops its actor.
 */
import { z } from 'zod';
import type { BindingDoc } from '../../domains/channels/documents.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

const chatChannelName = z
  .string()
  .trim()
  .regex(/^#?[a-z0-9][a-z0-9._-]{0,79}$/, { message: 'slack_channel is a Slack channel name (lowercase, no spaces), with or without #' })
  .transform((name) => name.replace(/^#/, ''));

const matchRule = z.strictObject({
  channel: z.string().min(1).max(100),
  slack_channel: chatChannelName.nullish(),
  mentioned: z.boolean().default(true),
  preserve_thread: z.boolean().default(true),
});
const bindingCreate = z.strictObject({
  agent: z.string().min(1).max(200),
  match_rule: matchRule,
  read_only: z.boolean().default(false),
  approval_write: z.enum(['allow', 'ask']).default('ask'),
  allow_bots: z.boolean().default(false),
  enabled: z.boolean().default(true),
});
const bindingPatch = z.strictObject({
  agent: z.string().min(1).max(200).optional(),
  // no defaults here: a field left out keeps its stored value
  match_rule: z
    .strictObject({
      channel: z.string().min(1).max(100),
      slack_channel: chatChannelName.nullable(),
      mentioned: z.boolean(),
      preserve_thread: z.boolean(),
    })
    .partial()
    .optional(),
  read_only: z.boolean().optional(),
  approval_write: z.enum(['allow', 'ask']).optional(),
  allow_bots: z.boolean().optional(),
  enabled: z.boolean().optional(),
});
const listQuery = pageQuery.extend({ channel: z.string().min(1).max(100).optional() });

const bindingSchema = z.object({
  ...storedSchema,
  agent: z.string(),
  agent_id: z.string(),
  match_rule: z.object({ channel: z.string(), slack_channel: z.string().nullable(), mentioned: z.boolean(), preserve_thread: z.boolean() }),
  read_only: z.boolean(),
  approval_write: z.enum(['allow', 'ask']),
  allow_bots: z.boolean(),
  enabled: z.boolean(),
  created_by: z.string(),
});

const present = (binding: BindingDoc) => ({
  id: binding.id,
  agent: binding.agent,
  agent_id: binding.agent_id,
  match_rule: binding.match_rule,
  read_only: binding.read_only,
  approval_write: binding.approval_write,
  allow_bots: binding.allow_bots,
  enabled: binding.enabled,
  created_by: binding.created_by,
  created_at: binding.created_at,
  updated_at: binding.updated_at,
});

export function bindingRoutes({ bindings }: Services): AnyRoute[] {
  const listPage = createPageResponder(bindings.listing, present);
  return [
    route({
      method: 'GET',
      path: '/bindings',
      tag: 'bindings',
      summary: 'List bindings (query channel: of one channel)',
      auth: 'bearer',
      permission: 'binding:read',
      query: listQuery,
      response: pageSchema(bindingSchema),
      handler: async ({ auth, query }) => {
        // the query object itself (not a copy): it carries the request's cursor scope
        const { channel } = query;
        return listPage(auth.orgId, query, channel === undefined ? undefined : { channel_id: channel });
      },
    }),
    route({
      method: 'POST',
      path: '/bindings',
      tag: 'bindings',
      summary: 'Bind an agent to a chat channel',
      auth: 'bearer',
      permission: 'binding:manage',
      body: bindingCreate,
      response: bindingSchema,
      status: 201,
      creates: true,
      handler: async ({ auth, body }) => ({ status: 201, json: present(await bindings.create(auth.orgId, auth.userId, body)) }),
    }),
    route({
      method: 'GET',
      path: '/bindings/:id',
      tag: 'bindings',
      summary: 'Get a binding, with the state of its actor',
      auth: 'bearer',
      permission: 'binding:read',
      params: idParams,
      response: bindingSchema.extend({ actor_state: z.string().nullable() }),
      handler: async ({ auth, params }) => {
        const binding = await bindings.get(auth.orgId, params.id);
        return { status: 200, json: { ...present(binding), actor_state: bindings.actorState(binding.id) } };
      },
    }),
    route({
      method: 'PATCH',
      path: '/bindings/:id',
      tag: 'bindings',
      summary: 'Change a binding (its actor takes the new rule)',
      auth: 'bearer',
      permission: 'binding:manage',
      params: idParams,
      body: bindingPatch,
      response: bindingSchema,
      handler: async ({ auth, params, body }) => ({ status: 200, json: present(await bindings.update(auth.orgId, params.id, body)) }),
    }),
    route({
      method: 'DELETE',
      path: '/bindings/:id',
      tag: 'bindings',
      summary: 'Delete a binding (its actor stops)',
      auth: 'bearer',
      permission: 'binding:manage',
      params: idParams,
      status: 204,
      handler: async ({ auth, params }) => {
        await bindings.delete(auth.orgId, params.id);
        return { status: 204, json: null };
      },
    }),
  ];
}
