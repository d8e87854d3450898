/**
 * `service_api_key`: a programmatic credential (`/api-keys`). The key is
 * answered only at creation and kept in state (sensitive). Deleting is the
 * API's soft revoke; a revoked key reads as gone, so a plan creates a new one.
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

type KeyView = { id: string; name: string; permissions: string[]; source_ids: string[] | null; expires_in_days: number | null; active: boolean; key?: string };
const state = (view: KeyView, key: Value): Attributes => ({ id: view.id, ...pick(view, ['name', 'permissions', 'source_ids', 'expires_in_days']), key });

export const apiKeyKind: ResourceKind = {
  name: 'service_api_key',
  description: 'An API key. Its plaintext is answered once, at creation, and kept in state. Destroying it revokes it (the record stays, inactive).',
  attributes: {
    name: { type: 'string', required: true, description: 'what the key is for' },
    permissions: { type: 'list_string', required: true, description: 'permission names (data source `service_permissions`), no more than the caller holds' },
    source_ids: { type: 'list_string', optional: true, description: 'limits the key to these sources; absent: every source' },
    expires_in_days: { type: 'number', optional: true, immutable: true, description: 'days until the key stops working; absent: never' },
    key: { type: 'string', computed: true, sensitive: true, description: 'the key itself, answered only at creation (kept in state)' },
  },
  create: async (api, desired) => {
    const view = await api.json<KeyView>('POST', '/api-keys', { body: pick(desired, ['name', 'permissions', 'source_ids', 'expires_in_days']) });
    return state(view, view.key ?? null);
  },
  read: async (api, id) => {
    const view = await readOrNull<KeyView>(api, itemPath('/api-keys', id));
    return view === null || !view.active ? null : state(view, null);
  },
  update: async (api, id, desired, prior) =>
    state(await api.json<KeyView>('PATCH', itemPath('/api-keys', id), { body: pick(desired, ['name', 'permissions', 'source_ids']) }), prior['key'] ?? null),
  delete: (api, id) => deleteIfPresent(api, itemPath('/api-keys', id)),
};
