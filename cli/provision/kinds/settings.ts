/**
 * `service_settings`: the organization's settings, a singleton. Its id is
 * always `org-settings`; create and update both write the desired state
 * (PATCH of the attributes configuration sets); delete leaves the settings as
 * they are, as the spec says. `llm_api_key` is write-only on the API: the
 * engine keeps the applied value in state (sensitive).
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';

const SETTINGS_ID = 'org-settings';
const FIELDS = [
  'organization_name',
  'llm_provider',
  'llm_model',
  'llm_base_url',
  'embedding_model',
  'auto_embed_on_ingest',
  'approval_timeout_secs',
  'context_tier',
] as const;
type SettingsView = Record<(typeof FIELDS)[number] | 'llm_api_key', Value>;

const state = (view: SettingsView): Attributes => {
  const out: Record<string, Value> = { id: SETTINGS_ID };
  for (const field of FIELDS) out[field] = view[field] ?? null;
  // masked on read: the engine keeps the applied key
  out['llm_api_key'] = null;
  return out;
};

/** only what configuration sets: an attribute left out stays as the organization has it */
const write = async (api: Parameters<ResourceKind['create']>[0], desired: Attributes): Promise<Attributes> => {
  const body = Object.fromEntries(Object.entries(desired).filter(([, value]) => value !== null));
  const view = await api.json<SettingsView>('PATCH', '/settings', { body });
  return { ...state(view), llm_api_key: desired['llm_api_key'] ?? null };
};

export const settingsKind: ResourceKind = {
  name: 'service_settings',
  description: 'The organization settings (one per organization, id `org-settings`). Destroying it changes nothing on the server.',
  attributes: {
    organization_name: { type: 'string', optional: true, computed: true, description: "the organization's name" },
    llm_provider: { type: 'string', optional: true, computed: true, description: '`openai` or `anthropic`' },
    llm_model: { type: 'string', optional: true, computed: true, description: 'model of agent runs' },
    llm_base_url: { type: 'string', optional: true, computed: true, description: "the organization's own OpenAI-compatible endpoint" },
    llm_api_key: { type: 'string', optional: true, sensitive: true, description: 'key for `llm_base_url` (write-only on the API, kept in state)' },
    embedding_model: { type: 'string', optional: true, computed: true, description: 'model of embeddings' },
    auto_embed_on_ingest: { type: 'bool', optional: true, computed: true, description: 'embed ingested text and memory in the background' },
    approval_timeout_secs: { type: 'number', optional: true, computed: true, description: 'how long an approval waits before it is denied' },
    context_tier: { type: 'string', optional: true, computed: true, description: '`basic` (Cypher) or `advanced` (adds KQL over context tables)' },
  },
  create: write,
  read: async (api) => state(await api.json<SettingsView>('GET', '/settings')),
  update: (api, _id, desired) => write(api, desired),
  delete: async () => {},
};
