/** `service_role`: a custom role, a named set of permissions (`/roles`; built-in roles cannot be managed). */
import type { ResourceKind } from '../schema.js';
import { deleteIfPresent, pick, readOrNull } from './rest.js';

type RoleView = { id: string; name: string; description: string; permissions: string[] };
const state = (view: RoleView) => ({ id: view.id, ...pick(view, ['name', 'description', 'permissions']) });

export const roleKind: ResourceKind = {
  name: 'service_role',
  description: 'A custom role. Permission names come from the data source `service_permissions`.',
  attributes: {
    name: { type: 'string', required: true, description: 'unique in the organization; not a built-in role name' },
    description: { type: 'string', optional: true, default: '', description: 'what the role is for' },
    permissions: { type: 'list_string', required: true, description: 'permission names, e.g. `graph:read`' },
  },
  create: async (api, desired) => state(await api.json<RoleView>('POST', '/roles', { body: pick(desired, ['name', 'description', 'permissions']) })),
  read: async (api, id) => {
    const view = await readOrNull<RoleView>(api, `/roles/${encodeURIComponent(id)}`);
    return view && state(view);
  },
  update: async (api, id, desired) =>
    state(await api.json<RoleView>('PATCH', `/roles/${encodeURIComponent(id)}`, { body: pick(desired, ['name', 'description', 'permissions']) })),
  delete: (api, id) => deleteIfPresent(api, `/roles/${encodeURIComponent(id)}`),
};
