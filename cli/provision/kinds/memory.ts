/**
 * `service_memory`: a memory entry (`/memory`). The provisioning form names
 * the REST fields differently (`content` is `text`, `memory_type` is `kind`)
 * and leaves `importance` to the API, as the spec says.
 */
import type { Attributes, ResourceKind } from '../schema.js';
import { deleteIfPresent, readOrNull } from './rest.js';

type MemoryView = { id: string; kind: string; realm: string; text: string; title: string | null; tags: string[] };
const state = (view: MemoryView) => ({ id: view.id, content: view.text, title: view.title, memory_type: view.kind, tags: view.tags, realm: view.realm });
const body = (desired: Attributes) => ({
  text: desired['content'],
  title: desired['title'] ?? null,
  kind: desired['memory_type'] ?? 'guideline',
  tags: desired['tags'] ?? [],
  realm: desired['realm'] ?? 'default',
});

export const memoryKind: ResourceKind = {
  name: 'service_memory',
  description: 'A memory entry agents recall. `importance` is managed through the API only.',
  attributes: {
    content: { type: 'string', required: true, description: 'the text recalled' },
    title: { type: 'string', optional: true, description: 'short title' },
    memory_type: { type: 'string', optional: true, default: 'guideline', description: '`guideline`, `fact`, `preference` or `note`' },
    tags: { type: 'list_string', optional: true, default: [], description: 'labels for filtering' },
    realm: { type: 'string', optional: true, default: 'default', description: 'the realm the entry belongs to' },
  },
  create: async (api, desired) => state(await api.json<MemoryView>('POST', '/memory', { body: body(desired) })),
  read: async (api, id) => {
    const view = await readOrNull<MemoryView>(api, `/memory/${encodeURIComponent(id)}`);
    return view && state(view);
  },
  update: async (api, id, desired) => state(await api.json<MemoryView>('PATCH', `/memory/${encodeURIComponent(id)}`, { body: body(desired) })),
  delete: (api, id) => deleteIfPresent(api, `/memory/${encodeURIComponent(id)}`),
};
