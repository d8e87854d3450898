import type { ConnectorTool } from '../../contract.js';
import { slackWebApi } from '../web-api.js';
import { CHANNEL_ID_SCHEMA, messagePage } from '../messages.js';

export const getChannelHistoryTool: ConnectorTool = {
  name: 'get_channel_history',
  description:
    'Reads the recent messages of a Slack channel, newest first (conversations.history), optionally only those after `oldest` (a ts). ' +
    'Returns messages with ts, user, text and reply_count; next_cursor when more follow.',
  effect: 'read',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['channel'],
    properties: {
      channel: CHANNEL_ID_SCHEMA,
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 20 },
      oldest: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'only messages after this ts' },
      cursor: { type: 'string', description: 'next_cursor of a previous call' },
    },
  },
  run: async (args, ctx) => {
    const { data } = await slackWebApi(ctx.config, ctx.net)(
      'conversations.history',
      {
        channel: String(args['channel']),
        limit: Number(args['limit']),
        oldest: typeof args['oldest'] === 'string' ? args['oldest'] : undefined,
        cursor: typeof args['cursor'] === 'string' ? args['cursor'] : undefined,
      },
      ctx.signal,
    );
    return messagePage(data);
  },
};
