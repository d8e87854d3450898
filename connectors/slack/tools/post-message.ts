import type { ConnectorTool } from '../../contract.js';
import { slackWebApi } from '../web-api.js';
import { CHANNEL_ID_SCHEMA } from '../messages.js';

export const postMessageTool: ConnectorTool = {
  name: 'post_message',
  description:
    'Posts a message to a Slack channel, optionally as a reply in a thread (thread_ts). Returns the channel and the ts of the new message. ' +
    'Fails with not_in_channel when the bot has not joined the channel (and lacks chat:write.public).',
  effect: 'write',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['channel', 'text'],
    properties: {
      channel: CHANNEL_ID_SCHEMA,
      text: { type: 'string', minLength: 1, maxLength: 40000, description: 'message text (Slack mrkdwn)' },
      thread_ts: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$', description: 'ts of the thread parent: reply in that thread' },
    },
  },
  run: async (args, ctx) => {
    const channel = String(args['channel']);
    const threadTs = typeof args['thread_ts'] === 'string' ? args['thread_ts'] : undefined;
    const { data } = await slackWebApi(ctx.config, ctx.net)('chat.postMessage', { channel, text: String(args['text']), thread_ts: threadTs }, ctx.signal);
    return {
      channel: typeof data['channel'] === 'string' ? data['channel'] : channel,
      ts: typeof data['ts'] === 'string' ? data['ts'] : null,
      thread_ts: threadTs ?? null,
    };
  },
};
