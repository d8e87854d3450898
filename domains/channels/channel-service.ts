/**
 * Chat-platform channels (`/channels`): created first, then connected by
 * pasting their tokens (sealed at rest, checked with the platform's token
 * check); saving one reloads it into the channel runtime when it turns on or
 * off, deleting one stops it and deletes its bindings.
 */
import type { Collections } from '../collections.js';
import { assertReferences } from '../references.js';
import type { ChannelCheck, ChannelRuntime, ConnectInput } from './channel-runtime.js';
import type { ChannelDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { getOr404, rejectImmutable, stripUndefined, unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface ChannelCreate {
  readonly channel_type: string;
  readonly display_name: string;
  readonly system_prompt?: string | null | undefined;
  readonly source_ids: string[];
  readonly response_mode: ChannelDoc['response_mode'];
  readonly is_active: boolean;
  readonly filter_config?: Record<string, unknown> | null | undefined;
}

/** a field left out keeps its stored value; `channel_type` is accepted only to be refused when it changes */
export interface ChannelPatch {
  readonly channel_type?: string | undefined;
  readonly display_name?: string | undefined;
  readonly system_prompt?: string | null | undefined;
  readonly source_ids?: string[] | undefined;
  readonly response_mode?: ChannelDoc['response_mode'] | undefined;
  readonly is_active?: boolean | undefined;
  readonly filter_config?: Record<string, unknown> | null | undefined;
}

const slugOf = (text: string): string =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'channel';

/** Server-derived, unique within the organization: type, a slug of the name, and the id's tail. */
const instanceNameOf = (type: string, name: string, id: string): string => `${type}-${slugOf(name)}-${id.slice(-6).toLowerCase()}`;

export class ChannelService {
  constructor(
    private readonly collections: Pick<Collections, 'channels' | 'bindings' | 'agents' | 'realms' | 'sources'>,
    private readonly runtime: Pick<ChannelRuntime, 'connect' | 'test' | 'reload' | 'channelRemoved'>,
  ) {}

  /** the channels as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['channels'], 'list' | 'revision'> {
    return this.collections.channels;
  }

  async create(org: OrgId, createdBy: string, body: ChannelCreate): Promise<ChannelDoc> {
    await this.checkSources(org, body.source_ids);
    const id = newId('chn');
    return unique('channel', () =>
      this.collections.channels.insert(org, {
        id,
        channel_type: body.channel_type,
        display_name: body.display_name,
        system_prompt: body.system_prompt ?? null,
        source_ids: body.source_ids,
        response_mode: body.response_mode,
        is_active: body.is_active,
        filter_config: body.filter_config ?? null,
        instance_name: instanceNameOf(body.channel_type, body.display_name, id),
        connection: null,
        created_by: createdBy,
      }),
    );
  }

  get(org: OrgId, id: string): Promise<ChannelDoc> {
    return getOr404(this.collections.channels, org, id, 'channel');
  }

  /** channel_type is immutable; turning a channel on or off reloads it */
  async update(org: OrgId, id: string, body: ChannelPatch): Promise<ChannelDoc> {
    const existing = await this.get(org, id);
    rejectImmutable(existing, body, ['channel_type']);
    if (body.source_ids !== undefined) await this.checkSources(org, body.source_ids);
    const { channel_type: _type, ...patch } = body;
    const updated = await this.collections.channels.update(org, existing.id, stripUndefined(patch));
    if (!updated) throw new ServiceError('not_found', `channel ${id} not found`);
    if (body.is_active !== undefined && body.is_active !== existing.is_active) await this.runtime.reload(org, updated);
    return updated;
  }

  /** the channel and its bindings */
  async delete(org: OrgId, id: string): Promise<void> {
    const channel = await this.get(org, id);
    await this.runtime.channelRemoved(channel.id);
    await this.collections.bindings.deleteWhere(org, { channel_id: channel.id });
    await this.collections.channels.delete(org, channel.id);
  }

  /** stores the connection the pasted tokens make (with the check's outcome) and reloads the channel */
  async connect(org: OrgId, id: string, input: ConnectInput): Promise<{ readonly channel: ChannelDoc; readonly check: ChannelCheck }> {
    const channel = await this.get(org, id);
    const { connection, check } = await this.runtime.connect(org, channel, input);
    const updated = await this.collections.channels.update(org, channel.id, { connection });
    if (!updated) throw new ServiceError('not_found', `channel ${id} not found`);
    await this.runtime.reload(org, updated);
    return { channel: updated, check };
  }

  /** checks the stored tokens and the bot's scopes; 422 `source_validation_failed` names what is missing */
  async test(org: OrgId, id: string): Promise<ChannelCheck> {
    const channel = await this.get(org, id);
    const check = await this.runtime.test(org, channel);
    if (!check.ok) throw new ServiceError('source_validation_failed', check.message ?? 'the channel tokens were refused', check.details);
    return check;
  }

  /** re-reads the channel and its bindings into the runtime */
  async reload(org: OrgId, id: string): Promise<{ bindings: number; socket_mode: boolean }> {
    return this.runtime.reload(org, await this.get(org, id));
  }

  /** 400 naming every source id (`source_ids.<index>`) the organization does not have */
  private async checkSources(org: OrgId, ids: readonly string[]): Promise<void> {
    await assertReferences(this.collections, org, { sources: { path: 'source_ids', ids } });
  }
}
