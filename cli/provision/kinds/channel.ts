/**
 * `service_channel`: a chat-platform channel integration (`/channels`).
 * Connecting it (pasting the bot's tokens) is done after the record exists,
 * through the API; the engine manages the record. `channel_type` is checked
 * at plan time against the channel catalog (`GET /channels/catalog`), so a
 * replacement by a type the server does not have stops before the old
 * channel is deleted.
 */
import { usage } from '../../errors.js';
import { canonical } from '../values.js';
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, pick, readOrNull } from './rest.js';

const FIELDS = ['channel_type', 'display_name', 'system_prompt', 'source_ids', 'response_mode', 'is_active', 'filter_config', 'instance_name'] as const;
const MUTABLE = ['display_name', 'system_prompt', 'source_ids', 'response_mode', 'is_active', 'filter_config'] as const;
type ChannelView = { id: string } & Record<(typeof FIELDS)[number], Value>;
const state = (view: ChannelView): Attributes => ({ id: view.id, ...pick(view, FIELDS) });

export const channelKind: ResourceKind = {
  name: 'service_channel',
  description: 'A chat channel integration. Connect it afterwards (`POST /channels/:id/connect` with the bot and signing tokens).',
  attributes: {
    channel_type: {
      type: 'string',
      required: true,
      immutable: true,
      description: 'the chat platform: a `channel_type` of `GET /channels/catalog` (today `slack`)',
    },
    display_name: { type: 'string', required: true, description: 'name shown in interfaces' },
    system_prompt: { type: 'string', optional: true, description: "the system prompt of the channel's runs" },
    source_ids: { type: 'list_string', optional: true, default: [], description: 'the sources its agent may see' },
    response_mode: { type: 'string', optional: true, default: 'agent', description: '`disabled`, `enabled` or `agent`' },
    is_active: { type: 'bool', optional: true, default: true, description: 'an inactive channel ignores its messages' },
    filter_config: { type: 'json', optional: true, description: 'which messages it takes' },
    instance_name: { type: 'string', computed: true, description: 'derived by the server' },
  },
  create: async (api, desired) => state(await api.json<ChannelView>('POST', '/channels', { body: pick(desired, ['channel_type', ...MUTABLE]) })),
  read: async (api, id) => {
    const view = await readOrNull<ChannelView>(api, itemPath('/channels', id));
    return view && state(view);
  },
  update: async (api, id, desired) => state(await api.json<ChannelView>('PATCH', itemPath('/channels', id), { body: pick(desired, MUTABLE) })),
  delete: (api, id) => deleteIfPresent(api, itemPath('/channels', id)),
  validate: async (api, desired) => {
    const catalog = await api.json<{ items: { channel_type: string }[] }>('GET', '/channels/catalog');
    const types = catalog.items.map((item) => item.channel_type);
    const type = desired['channel_type'];
    if (typeof type !== 'string' || !types.includes(type)) {
      throw usage(`service_channel: channel_type ${canonical(type)} is not in the channel catalog (known: ${types.join(', ')})`);
    }
  },
};
