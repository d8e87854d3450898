/** The two read-only data sources: the agent-type catalog and the permission catalog. */
import type { DataSourceKind, Value } from '../schema.js';

export const agentTypesData: DataSourceKind = {
  name: 'service_agent_types',
  description: 'The agent types agents can be created from.',
  attributes: { types: { type: 'json', computed: true, description: 'list of `{agent_type, description, config_schema}`' } },
  read: async (api) => {
    const { items } = await api.json<{ items: { agent_type: string; description: string; config_schema: Value }[] }>('GET', '/agents/types');
    return {
      id: 'agent-types',
      types: items.map((item) => ({ agent_type: item.agent_type, description: item.description, config_schema: item.config_schema })),
    };
  },
};

export const permissionsData: DataSourceKind = {
  name: 'service_permissions',
  description: 'The permission names roles and API keys can hold.',
  attributes: { names: { type: 'list_string', computed: true, description: 'every permission name' } },
  read: async (api) => {
    const { items } = await api.json<{ items: { name: string }[] }>('GET', '/roles/permissions');
    return { id: 'permissions', names: items.map((item) => item.name) };
  },
};
