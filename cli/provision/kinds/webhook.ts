/**
 * `service_webhook`: a provisioned inbound webhook endpoint
 * (`/inbound-webhooks`). Its secret token is answered only at creation and
 * kept in state (sensitive); rotation is destroy and recreate.
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

type InboundView = {
  id: string;
  name: string;
  description: string | null;
  payload_template: string;
  system_prompt: string | null;
  slug: string;
  url: string;
  secret_token?: string;
  created_at: string;
};

const state = (view: InboundView, secret: Value): Attributes => ({
  id: view.id,
  ...pick(view, ['name', 'description', 'payload_template', 'system_prompt', 'slug', 'url', 'created_at']),
  secret_token: secret,
});
const body = (desired: Attributes): Record<string, Value> => {
  const out = pick(desired, ['name', 'description', 'system_prompt']);
  if (desired['payload_template'] !== null && desired['payload_template'] !== undefined) out['payload_template'] = desired['payload_template'];
  return out;
};

export const webhookKind: ResourceKind = {
  name: 'service_webhook',
  description: 'An inbound webhook endpoint: a signed URL whose deliveries start an agent run. Rotate its secret by destroying and recreating it.',
  attributes: {
    name: { type: 'string', required: true, description: 'unique among tasks and endpoints of the organization' },
    description: { type: 'string', optional: true, description: 'what sends to it' },
    payload_template: {
      type: 'string',
      optional: true,
      computed: true,
      description: 'the instruction of the run, a template over `{{trigger.body}}` (server default: the whole payload)',
    },
    system_prompt: { type: 'string', optional: true, description: "the runs' system prompt" },
    slug: { type: 'string', computed: true, description: 'the path id of the URL' },
    secret_token: { type: 'string', computed: true, sensitive: true, description: 'the signing secret, answered only at creation (kept in state)' },
    url: { type: 'string', computed: true, description: 'where the sender posts' },
    created_at: { type: 'string', computed: true, description: 'when the endpoint was created' },
  },
  create: async (api, desired) => {
    const view = await api.json<InboundView>('POST', '/inbound-webhooks', { body: body(desired) });
    return state(view, view.secret_token ?? null);
  },
  read: async (api, id) => {
    const view = await readOrNull<InboundView>(api, itemPath('/inbound-webhooks', id));
    return view && state(view, null);
  },
  update: async (api, id, desired, prior) =>
    state(await api.json<InboundView>('PATCH', itemPath('/inbound-webhooks', id), { body: body(desired) }), prior['secret_token'] ?? null),
  delete: (api, id) => deleteIfPresent(api, itemPath('/inbound-webhooks', id)),
};
