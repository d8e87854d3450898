/**
 * `service_gateway`: an external orchestration engine runs can be dispatched
 * to (`/gateways`). The api_key is write-only on the API (reads show `****`
 * and its last 4 characters): refresh keeps the applied key while those 4
 * match, and shows drift when they do not.
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

const FIELDS = ['name', 'engine_type', 'base_url', 'is_default', 'context', 'last_health_status'] as const;
type GatewayView = { id: string; api_key: string | null } & Record<(typeof FIELDS)[number], Value>;
const state = (view: GatewayView, apiKey: Value): Attributes => ({ id: view.id, ...pick(view, FIELDS), api_key: apiKey });

/** the applied key while the API's hint matches it; else the mask, so the change shows */
const keyOf = (masked: string | null, applied: Value | undefined): Value => {
  if (masked === null) return null;
  return typeof applied === 'string' && masked === `****${applied.slice(-4)}` ? applied : masked;
};

export const gatewayKind: ResourceKind = {
  name: 'service_gateway',
  description: 'A gateway: an external orchestration engine (`temporal`, `webhook`) runs can be dispatched to. Its api_key is kept in state.',
  attributes: {
    name: { type: 'string', required: true, description: 'unique in the organization; not `default`' },
    engine_type: { type: 'string', required: true, immutable: true, description: '`temporal` or `webhook`' },
    base_url: { type: 'string', required: true, description: "the engine's http(s) address" },
    api_key: { type: 'string', optional: true, sensitive: true, description: 'the engine credential (`webhook`: at least 16 characters, signs dispatches)' },
    is_default: { type: 'bool', optional: true, default: false, description: 'the gateway `default` names; setting it clears the previous default' },
    context: { type: 'json', optional: true, default: {}, description: 'JSON passed on every dispatch (`temporal`: task_queue, workflow_type)' },
    last_health_status: { type: 'string', computed: true, description: '`unknown`, `ok` or `down`' },
  },
  create: async (api, desired) => {
    const body = pick(desired, ['name', 'engine_type', 'base_url', 'is_default', 'context']);
    if (desired['api_key'] !== null) body['api_key'] = desired['api_key'] ?? null;
    return state(await api.json<GatewayView>('POST', '/gateways', { body }), desired['api_key'] ?? null);
  },
  read: async (api, id, prior) => {
    const view = await readOrNull<GatewayView>(api, itemPath('/gateways', id));
    return view && state(view, keyOf(view.api_key, prior?.['api_key']));
  },
  // the key goes with every update: the API needs it again when base_url moves
  update: async (api, id, desired) =>
    state(
      await api.json<GatewayView>('PATCH', itemPath('/gateways', id), {
        body: { ...pick(desired, ['name', 'base_url', 'is_default', 'context']), api_key: desired['api_key'] ?? null },
      }),
      desired['api_key'] ?? null,
    ),
  delete: (api, id) => deleteIfPresent(api, itemPath('/gateways', id)),
};
