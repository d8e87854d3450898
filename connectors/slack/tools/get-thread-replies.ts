import type { ConnectorTool } from '../../contract.js';
import { slackWebApi } from '../web-api.js';
import { CHANNEL_ID_SCHEMA, messagePage } from '../messages.js';

export const getThreadRepliesTool: ConnectorTool = {
  name: 'get_thread_replies',
  description:
    'Reads a Slack thread: the parent message and its replies, oldest first (conversations.replies). ' +
    'Returns messages with ts, user, bot_id and text; next_cursor when more follow.',
  effect: 'read',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['channel', 'thread_ts'],
    properties: {
      channel: CHANNEL_ID_SCHEMA,
      thread_ts: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$', description: 'ts of the thread parent message' },
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      cursor: { type: 'string', description: 'next_cursor of a previous call' },
    },
  },
  run: async (args, ctx) => {
    const { data } = await slackWebApi(ctx.config, ctx.net)(
      'conversations.replies',
      {
        channel: String(args['channel']),
        ts: String(args['thread_ts']),
        limit: Number(args['limit']),
        cursor: typeof args['cursor'] === 'string' ? args['cursor'] : undefined,
      },
      ctx.signal,
    );
    return messagePage(data);
  },
};
