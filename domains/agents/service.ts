/**
 * Configured agents of the organization: `agent_type` is fixed at creation;
 * `config` is validated against the type's schema on every write and replaced
 * whole by an update. The `default` agent, which tasks fall back to, cannot be
 * deleted or renamed.
 */
import type { AgentDoc } from './documents.js';
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { DEFAULT_AGENT } from '../organizations.js';
import { getOr404, rejectImmutable, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';
import { validateAgentConfig } from './agent-types.js';

export interface AgentCreate {
  readonly agent_type: string;
  readonly name: string;
  readonly config: Record<string, unknown>;
  readonly enabled: boolean;
}

export interface AgentPatch {
  readonly agent_type?: string | undefined;
  readonly name?: string | undefined;
  readonly config?: Record<string, unknown> | undefined;
  readonly enabled?: boolean | undefined;
}

export class AgentService {
  constructor(private readonly agents: Collections['agents']) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['agents'], 'list' | 'revision'> {
    return this.agents;
  }

  create(org: OrgId, input: AgentCreate): Promise<AgentDoc> {
    const config = validateAgentConfig(input.agent_type, input.config);
    return unique('agent', () => this.agents.insert(org, { agent_type: input.agent_type, name: input.name, config, enabled: input.enabled }));
  }

  /** by id, or by name */
  async get(org: OrgId, idOrName: string): Promise<AgentDoc> {
    const agent = (await this.agents.get(org, idOrName)) ?? (await this.agents.findOne(org, { name: idOrName }));
    if (!agent) throw new ServiceError('not_found', `agent ${idOrName} not found`);
    return agent;
  }

  async update(org: OrgId, id: string, patch: AgentPatch): Promise<AgentDoc> {
    const agent = await getOr404(this.agents, org, id, 'agent');
    rejectImmutable(agent, patch, ['agent_type']);
    if (agent.name === DEFAULT_AGENT && patch.name !== undefined && patch.name !== DEFAULT_AGENT) {
      throw new ServiceError('conflict', 'the default agent cannot be renamed: tasks without an agent fall back to it', { agent: DEFAULT_AGENT });
    }
    const config = patch.config === undefined ? undefined : validateAgentConfig(agent.agent_type, patch.config);
    const fields = {
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(config === undefined ? {} : { config }),
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
    };
    const updated = await unique('agent', () => this.agents.update(org, agent.id, fields));
    if (!updated) throw new ServiceError('not_found', `agent ${id} not found`);
    return updated;
  }

  async delete(org: OrgId, id: string): Promise<void> {
    const agent = await getOr404(this.agents, org, id, 'agent');
    if (agent.name === DEFAULT_AGENT) {
      throw new ServiceError('conflict', 'the default agent cannot be deleted: tasks without an agent fall back to it', { agent: DEFAULT_AGENT });
    }
    await this.agents.delete(org, agent.id);
  }
}
