/**
 * The built-in `slack` connector (chat platform): post messages, read threads
 * and channel history, look channels up, through the Slack Web API (its own
 * small client on the egress guard, web-api.ts). `base_url` points it at a
 * proxy or a Slack-compatible API (the tests' fake). A channel the bot has not joined
 * yields the tool error `not_in_channel`.
 */
import type { ConnectorPlugin } from '../contract.js';
import { validateSlackSource } from './token-check.js';
import { findChannelTool } from './tools/find-channel.js';
import { getChannelHistoryTool } from './tools/get-channel-history.js';
import { getThreadRepliesTool } from './tools/get-thread-replies.js';
import { postMessageTool } from './tools/post-message.js';

const SLACK_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['bot_token'],
  properties: {
    bot_token: { type: 'string', minLength: 1, writeOnly: true, description: 'bot user OAuth token (xoxb-...)' },
    base_url: {
      type: 'string',
      format: 'uri',
      pattern: '^https?://',
      description: 'Web API base, e.g. https://slack.com/api/ (the default) or a proxy',
    },
  },
} as const;

export function createSlackPlugin(): ConnectorPlugin {
  return {
    kind: 'slack',
    version: '1.0.0',
    contract: '^1',
    description: 'Slack (chat platform): post messages and thread replies, read threads and channel history, look channels up.',
    configSchema: SLACK_CONFIG_SCHEMA,
    validate: validateSlackSource,
    tools: [postMessageTool, getThreadRepliesTool, getChannelHistoryTool, findChannelTool],
  };
}
