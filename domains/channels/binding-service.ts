/**
 * Bindings: which agent answers which messages of a chat channel. Each runs as
 * a `channel_binding` actor; saving and deleting a binding starts, updates and
 * stops it.
 */
import type { Collections } from '../collections.js';
import { assertReferences } from '../references.js';
import type { ChannelRuntime } from './channel-runtime.js';
import type { BindingDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { getOr404, stripUndefined } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { Supervisor } from '../../runtime/supervisor.js';

type MatchRule = BindingDoc['match_rule'];

export interface BindingCreate {
  readonly agent: string;
  readonly match_rule: Omit<MatchRule, 'slack_channel'> & { readonly slack_channel?: string | null | undefined };
  readonly read_only: boolean;
  readonly approval_write: BindingDoc['approval_write'];
  readonly allow_bots: boolean;
  readonly enabled: boolean;
}

/** a field left out keeps its stored value */
export interface BindingPatch {
  readonly agent?: string | undefined;
  readonly match_rule?: { readonly [K in keyof MatchRule]?: MatchRule[K] | undefined } | undefined;
  readonly read_only?: boolean | undefined;
  readonly approval_write?: BindingDoc['approval_write'] | undefined;
  readonly allow_bots?: boolean | undefined;
  readonly enabled?: boolean | undefined;
}

export class BindingService {
  constructor(
    private readonly collections: Collections,
    private readonly runtime: Pick<ChannelRuntime, 'bindingSaved' | 'bindingRemoved'>,
    private readonly supervisor: Pick<Supervisor, 'info'>,
  ) {}

  /** the bindings as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['bindings'], 'list' | 'revision'> {
    return this.collections.bindings;
  }

  async create(org: OrgId, createdBy: string, body: BindingCreate): Promise<BindingDoc> {
    const agentId = await this.checkReferences(org, body.agent, body.match_rule.channel);
    // assertReferences resolves every agent it was given, or throws
    if (agentId === undefined) throw new Error('the agent reference did not resolve');
    const binding = await this.collections.bindings.insert(org, {
      agent: body.agent,
      agent_id: agentId,
      channel_id: body.match_rule.channel,
      match_rule: {
        channel: body.match_rule.channel,
        slack_channel: body.match_rule.slack_channel ?? null,
        mentioned: body.match_rule.mentioned,
        preserve_thread: body.match_rule.preserve_thread,
      },
      read_only: body.read_only,
      approval_write: body.approval_write,
      allow_bots: body.allow_bots,
      enabled: body.enabled,
      created_by: createdBy,
    });
    this.runtime.bindingSaved(org, binding);
    return binding;
  }

  get(org: OrgId, id: string): Promise<BindingDoc> {
    return getOr404(this.collections.bindings, org, id, 'binding');
  }

  /** the state of the binding's actor, null when none runs */
  actorState(id: string): string | null {
    return this.supervisor.info(id)?.state ?? null;
  }

  /** the binding's actor takes the new rule */
  async update(org: OrgId, id: string, body: BindingPatch): Promise<BindingDoc> {
    const existing = await this.get(org, id);
    const rule = { ...existing.match_rule, ...stripUndefined(body.match_rule ?? {}) };
    const agentId = await this.checkReferences(org, body.agent, body.match_rule?.channel);
    const updated = await this.collections.bindings.update(
      org,
      existing.id,
      stripUndefined({
        agent: body.agent,
        agent_id: agentId,
        channel_id: rule.channel,
        match_rule: { ...rule, slack_channel: rule.slack_channel ?? null },
        read_only: body.read_only,
        approval_write: body.approval_write,
        allow_bots: body.allow_bots,
        enabled: body.enabled,
      }),
    );
    if (!updated) throw new ServiceError('not_found', `binding ${id} not found`);
    this.runtime.bindingSaved(org, updated);
    return updated;
  }

  /** its actor stops */
  async delete(org: OrgId, id: string): Promise<void> {
    const binding = await this.get(org, id);
    await this.collections.bindings.delete(org, binding.id);
    await this.runtime.bindingRemoved(binding);
  }

  /** the agent (id or name) and the channel must be the organization's; resolves the agent's id */
  private async checkReferences(org: OrgId, agent: string | undefined, channel: string | undefined): Promise<string | undefined> {
    const resolved = await assertReferences(this.collections, org, {
      agent: agent === undefined ? undefined : { path: 'agent', value: agent },
      channel: channel === undefined ? undefined : { path: 'match_rule.channel', value: channel },
    });
    return resolved.agent?.id;
  }
}
