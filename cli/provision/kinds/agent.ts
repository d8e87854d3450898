/** `service_agent`: a configured agent of a type from the agent-type catalog (`/agents`). */
import type { ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, pick, readOrNull } from './rest.js';

type AgentView = { id: string; agent_type: string; name: string; config: Record<string, Value>; enabled: boolean };
const state = (view: AgentView) => ({ id: view.id, ...pick(view, ['agent_type', 'name', 'config', 'enabled']) });
const body = (desired: Readonly<Record<string, Value>>) => ({ name: desired['name'], config: desired['config'] ?? {}, enabled: desired['enabled'] ?? true });

export const agentKind: ResourceKind = {
  name: 'service_agent',
  description: 'An agent: a type from the agent-type catalog (data source `service_agent_types`) with its configuration.',
  attributes: {
    agent_type: { type: 'string', required: true, immutable: true, description: 'an agent type of the catalog' },
    name: { type: 'string', required: true, description: 'unique in the organization' },
    config: { type: 'json', optional: true, default: {}, description: "the type's configuration, checked against its config schema" },
    enabled: { type: 'bool', optional: true, default: true, description: 'a disabled agent takes no runs' },
  },
  create: async (api, desired) => state(await api.json<AgentView>('POST', '/agents', { body: { agent_type: desired['agent_type'], ...body(desired) } })),
  read: async (api, id) => {
    const view = await readOrNull<AgentView>(api, `/agents/${encodeURIComponent(id)}`);
    return view && state(view);
  },
  update: async (api, id, desired) => state(await api.json<AgentView>('PATCH', `/agents/${encodeURIComponent(id)}`, { body: body(desired) })),
  delete: (api, id) => deleteIfPresent(api, `/agents/${encodeURIComponent(id)}`),
};
