/** What every new organization starts with: the `default` realm, its settings and a default agent. */
import type { Collections } from './collections.js';
import type { SettingsDoc } from '../domains/settings/documents.js';
import type { OrgId } from '../runtime/store/types.js';
import { DEFAULT_REALM } from '../runtime/graph/names.js';

export const DEFAULT_AGENT = 'default';
export const DEFAULT_APPROVAL_TIMEOUT_SECS = 900;

export type SettingsFields = Omit<SettingsDoc, 'id' | 'created_at' | 'updated_at' | 'singleton'>;

/** What a new organization starts with and what `PUT /settings` resets omitted fields to. */
export const SETTINGS_DEFAULTS: SettingsFields = {
  llm_provider: null,
  llm_model: null,
  llm_base_url: null,
  llm_api_key_sealed: null,
  embedding_model: null,
  auto_embed_on_ingest: false,
  approval_timeout_secs: DEFAULT_APPROVAL_TIMEOUT_SECS,
  context_tier: 'basic',
};

export function createOrganizationProvisioner(collections: Collections) {
  return async (org: OrgId): Promise<void> => {
    await collections.realms.insert(org, {
      name: DEFAULT_REALM,
      display_name: 'Default',
      description: 'Created with the organization; cannot be deleted.',
      color: null,
    });
    await collections.settings.insert(org, { singleton: true, ...SETTINGS_DEFAULTS });
    await collections.agents.insert(org, { agent_type: 'assistant', name: DEFAULT_AGENT, config: {}, enabled: true });
  };
}
