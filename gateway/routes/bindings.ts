/**
 * /bindings: which agent answers which messages of a chat channel. Each
 * binding runs as a `channel_binding` actor (domains/channels/); creating,
 * changing and deleting a binding starts, updates and stops its actor.
 */
import { z } from 'zod';
import type { BindingDoc } from '../../domains/channels/documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { assertReferences } from '../../domains/references.js';
import type { OrgId } from '../../runtime/store/types.js';
import { createPageResponder, pageQuery, pageSchema } from '../pagination.js';
import { idParams, storedSchema } from '../resource.js';
import { getOr404, stripUndefined } from '../../runtime/store/documents.js';
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

export function bindingRoutes({ collections, channels: runtime, supervisor }: Services): AnyRoute[] {
  const { bindings } = collections;
  const listPage = createPageResponder(bindings, present);

  /** the agent (id or name) and the channel must be the organization's; resolves the agent's id */
  const checkReferences = async (org: OrgId, agent: string | undefined, channel: string | undefined): Promise<string | undefined> => {
    const resolved = await assertReferences(collections, org, {
      agent: agent === undefined ? undefined : { path: 'agent', value: agent },
      channel: channel === undefined ? undefined : { path: 'match_rule.channel', value: channel },
    });
    return resolved.agent?.id;
  };

  return [
    route({
      method: 'GET', path: '/bindings', tag: 'bindings', summary: 'List bindings (query channel: of one channel)', auth: 'bearer',
      permission: 'binding:read', query: listQuery, response: pageSchema(bindingSchema),
      handler: async ({ auth, query }) => {
        // the query object itself (not a copy): it carries the request's cursor scope
        const { channel } = query;
        return listPage(auth.orgId, query, channel === undefined ? undefined : { channel_id: channel });
      },
    }),
    route({
      method: 'POST', path: '/bindings', tag: 'bindings', summary: 'Bind an agent to a chat channel', auth: 'bearer',
      permission: 'binding:manage', body: bindingCreate, response: bindingSchema, status: 201, creates: true,
      handler: async ({ auth, body }) => {
        const agentId = await checkReferences(auth.orgId, body.agent, body.match_rule.channel);
        // assertReferences resolves every agent it was given, or throws
        if (agentId === undefined) throw new Error('the agent reference did not resolve');
        const binding = await bindings.insert(auth.orgId, {
          agent: body.agent,
          agent_id: agentId,
          channel_id: body.match_rule.channel,
          match_rule: {
            channel: body.match_rule.channel,
            slack_channel: body.match_rule.slack_channel ?? null,
            mentioned: body.match_rule.mentioned,
            preserve_thread: body.match_rule.preserve_thread,
          },
          read_only: body.read_only,
          approval_write: body.approval_write,
          allow_bots: body.allow_bots,
          enabled: body.enabled,
          created_by: auth.userId,
        });
        runtime.bindingSaved(auth.orgId, binding);
        return { status: 201, json: present(binding) };
      },
    }),
    route({
      method: 'GET', path: '/bindings/:id', tag: 'bindings', summary: 'Get a binding, with the state of its actor', auth: 'bearer',
      permission: 'binding:read', params: idParams, response: bindingSchema.extend({ actor_state: z.string().nullable() }),
      handler: async ({ auth, params }) => {
        const binding = await getOr404(bindings, auth.orgId, params.id, 'binding');
        return { status: 200, json: { ...present(binding), actor_state: supervisor.info(binding.id)?.state ?? null } };
      },
    }),
    route({
      method: 'PATCH', path: '/bindings/:id', tag: 'bindings', summary: 'Change a binding (its actor takes the new rule)', auth: 'bearer',
      permission: 'binding:manage', params: idParams, body: bindingPatch, response: bindingSchema,
      handler: async ({ auth, params, body }) => {
        const existing = await getOr404(bindings, auth.orgId, params.id, 'binding');
        const rule = { ...existing.match_rule, ...stripUndefined(body.match_rule ?? {}) };
        const agentId = await checkReferences(auth.orgId, body.agent, body.match_rule?.channel);
        const updated = await bindings.update(auth.orgId, existing.id, stripUndefined({
          agent: body.agent,
          agent_id: agentId,
          channel_id: rule.channel,
          match_rule: { ...rule, slack_channel: rule.slack_channel ?? null },
          read_only: body.read_only,
          approval_write: body.approval_write,
          allow_bots: body.allow_bots,
          enabled: body.enabled,
        }));
        if (!updated) throw new ServiceError('not_found', `binding ${params.id} not found`);
        runtime.bindingSaved(auth.orgId, updated);
        return { status: 200, json: present(updated) };
      },
    }),
    route({
      method: 'DELETE', path: '/bindings/:id', tag: 'bindings', summary: 'Delete a binding (its actor stops)', auth: 'bearer',
      permission: 'binding:manage', params: idParams, status: 204,
      handler: async ({ auth, params }) => {
        const binding = await getOr404(bindings, auth.orgId, params.id, 'binding');
        await bindings.delete(auth.orgId, binding.id);
        await runtime.bindingRemoved(binding);
        return { status: 204, json: null };
      },
    }),
  ];
}
