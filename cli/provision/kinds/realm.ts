/** `service_realm`: a namespace for graph, sources and memory (`/realms`). */
import type { ResourceKind } from '../schema.js';
import { deleteIfPresent, pick, readOrNull, withoutNulls } from './rest.js';

const FIELDS = ['name', 'display_name', 'description', 'color'] as const;
type RealmView = { id: string } & Record<(typeof FIELDS)[number], string | null>;
const state = (view: RealmView) => ({ id: view.id, ...pick(view, FIELDS) });

export const realmKind: ResourceKind = {
  name: 'service_realm',
  description: 'A realm: the namespace of graph data, sources and memory. The realm `default` exists already and cannot be managed.',
  attributes: {
    name: { type: 'string', required: true, immutable: true, description: 'lowercase a-z, 0-9, `-` and `_`, at most 100 characters' },
    display_name: { type: 'string', optional: true, description: 'name shown in interfaces' },
    description: { type: 'string', optional: true, description: 'what the realm holds' },
    color: { type: 'string', optional: true, description: 'hex colour, e.g. `#3b82f6`' },
  },
  create: async (api, desired) => state(await api.json<RealmView>('POST', '/realms', { body: withoutNulls(desired) })),
  read: async (api, id) => {
    const view = await readOrNull<RealmView>(api, `/realms/${encodeURIComponent(id)}`);
    return view && state(view);
  },
  update: async (api, id, desired) =>
    state(await api.json<RealmView>('PATCH', `/realms/${encodeURIComponent(id)}`, { body: pick(desired, ['display_name', 'description', 'color']) })),
  delete: (api, id) => deleteIfPresent(api, `/realms/${encodeURIComponent(id)}`),
  // memory and sources still name the old realm until they are updated to the new one
  createBeforeDestroy: true,
};
