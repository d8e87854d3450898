import { ToolError, type ConnectorTool } from '../../contract.js';
import { slackWebApi } from '../web-api.js';

/** pages of conversations.list read at most while looking for a name */
const MAX_PAGES = 20;

export const findChannelTool: ConnectorTool = {
  name: 'find_channel',
  description:
    'Looks a Slack channel up by #name or by id. Returns its id, name, whether it is private, whether the bot is a member, and its topic. ' +
    'Use it to turn a channel name into the id the other slack tools take.',
  effect: 'read',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 80, description: 'channel name, with or without #' },
      id: { type: 'string', pattern: '^[CGD][A-Z0-9]{2,}$', description: 'channel id' },
    },
    oneOf: [{ required: ['name'] }, { required: ['id'] }],
  },
  run: async (args, ctx) => {
    const slack = slackWebApi(ctx.config, ctx.net);
    if (typeof args['id'] === 'string') {
      const id = args['id'];
      const { data } = await slack('conversations.info', { channel: id }, ctx.signal);
      return present((data['channel'] as ChannelLike | undefined) ?? { id });
    }
    const name = String(args['name']).replace(/^#/, '').toLowerCase();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const { data } = await slack(
        'conversations.list',
        { limit: 200, exclude_archived: true, types: 'public_channel,private_channel', cursor: cursor || undefined },
        ctx.signal,
      );
      const found = ((data['channels'] as ChannelLike[] | undefined) ?? []).find((channel) => channel.name === name);
      if (found) return present(found);
      cursor = (data['response_metadata'] as { next_cursor?: string } | undefined)?.next_cursor;
      if (!cursor) break;
    }
    throw new ToolError('channel_not_found', `no channel named #${name} is visible to the bot`, { name });
  },
};

interface ChannelLike {
  readonly id?: string;
  readonly name?: string;
  readonly is_private?: boolean;
  readonly is_member?: boolean;
  readonly topic?: { readonly value?: string };
}

const present = (channel: ChannelLike) => ({
  id: channel.id ?? null,
  name: channel.name ?? null,
  is_private: channel.is_private ?? false,
  is_member: channel.is_member ?? false,
  topic: channel.topic?.value ?? '',
});
