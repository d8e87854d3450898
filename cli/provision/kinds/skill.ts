/** `service_skill`: instructions agents can load (`/skills`). New content sends an approved skill back to draft (the approval workflow stays in the API). */
import type { ResourceKind } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

const FIELDS = ['name', 'slug', 'description', 'version', 'tags', 'content', 'scope'] as const;
const MUTABLE = ['name', 'description', 'version', 'tags', 'content'] as const;
type SkillView = { id: string } & Record<(typeof FIELDS)[number], string | string[]>;
const state = (view: SkillView) => ({ id: view.id, ...pick(view, FIELDS) });

export const skillKind: ResourceKind = {
  name: 'service_skill',
  description: 'A skill: instructions an agent can load. It starts as a draft; submitting and approving it stay API operations.',
  attributes: {
    name: { type: 'string', required: true, description: 'shown to people' },
    slug: { type: 'string', required: true, immutable: true, description: 'lowercase a-z, 0-9 and `-`, unique in the organization' },
    description: { type: 'string', optional: true, default: '', description: 'what the skill is for' },
    version: { type: 'string', optional: true, default: '1.0.0', description: 'semver-like, e.g. `1.2.0`' },
    tags: { type: 'list_string', optional: true, default: [], description: 'labels for filtering' },
    content: { type: 'string', optional: true, default: '', description: 'the instructions (at most 256 KiB)' },
    scope: { type: 'string', optional: true, default: 'org', immutable: true, description: '`org` (everyone) or `user` (its creator only)' },
  },
  create: async (api, desired) => state(await api.json<SkillView>('POST', '/skills', { body: pick(desired, FIELDS) })),
  read: async (api, id) => {
    const view = await readOrNull<SkillView>(api, itemPath('/skills', id));
    return view && state(view);
  },
  update: async (api, id, desired) => state(await api.json<SkillView>('PATCH', itemPath('/skills', id), { body: pick(desired, MUTABLE) })),
  delete: (api, id) => deleteIfPresent(api, itemPath('/skills', id)),
};
